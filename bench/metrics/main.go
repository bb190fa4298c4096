package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

type options struct {
	scrapes     int
	rows        int
	window      time.Duration
	interval    time.Duration
	clusters    int
	schedules   int
	settleLimit time.Duration
	instance    bool
	operator    bool
	quiet       quiet
}

func main() {
	var o options
	parts := flag.String("parts", "instance,operator", "what to measure: instance (scrapes and CPU), operator, or both")
	flag.IntVar(&o.scrapes, "scrapes", 200, "scrapes in a row for the size and latency figures")
	flag.IntVar(&o.rows, "rows", 10000, "rows written on the primary before it is scraped")
	flag.DurationVar(&o.window, "window", 5*time.Minute, "each CPU window of the instance manager (without and with scrapes); 0 skips them")
	flag.DurationVar(&o.interval, "interval", 15*time.Second, "scrape interval in the scraped CPU window")
	flag.IntVar(&o.clusters, "clusters", 100, "Clusters (one per namespace) the ScheduledBackups are spread over")
	flag.IntVar(&o.schedules, "schedules", 1000, "ScheduledBackups")
	flag.DurationVar(&o.settleLimit, "settle-limit", 10*time.Minute, "longest wait for the operator to reconcile every ScheduledBackup")
	flag.StringVar(&o.quiet.binary, "wait-for", "e2e.test", "before each measurement, wait while a program of this name runs; empty: do not wait")
	flag.DurationVar(&o.quiet.limit, "wait-limit", 20*time.Minute, "longest such wait; then measure anyway and say so")
	flag.DurationVar(&o.quiet.poll, "wait-poll", 30*time.Second, "how often to look again while waiting")
	flag.Parse()
	for _, p := range strings.Split(*parts, ",") {
		switch strings.TrimSpace(p) {
		case "instance":
			o.instance = true
		case "operator":
			o.operator = true
		default:
			fmt.Fprintf(os.Stderr, "bench/metrics: unknown part %q (instance, operator)\n", p)
			os.Exit(2)
		}
	}
	if o.clusters < 1 || o.schedules < 1 || o.scrapes < 1 || o.interval <= 0 {
		fmt.Fprintln(os.Stderr, "bench/metrics: -clusters, -schedules, -scrapes and -interval must be positive")
		os.Exit(2)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "bench/metrics:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	var r report
	r.started = time.Now()
	if o.instance {
		if note := o.quiet.wait("the instance's scrapes"); note != "" {
			r.notes = append(r.notes, note)
		}
		res, err := runInstance(ctx, o, o.quiet)
		if err != nil {
			return fmt.Errorf("instance: %w", err)
		}
		r.instance = res
	}
	if o.operator {
		if note := o.quiet.wait("the operator"); note != "" {
			r.notes = append(r.notes, note)
		}
		res, err := runOperator(ctx, o, o.quiet)
		if err != nil {
			return fmt.Errorf("operator: %w", err)
		}
		r.operator = res
	}
	r.print(os.Stdout, o)
	return nil
}
