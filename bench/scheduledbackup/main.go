package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

type options struct {
	schedules  int
	namespaces int
	cadence    time.Duration
	duration   time.Duration
	grace      time.Duration
	workers    int
	profile    string
	opProfile  string
	// adminCredentials runs the operator with the admin client certificate instead of its
	// ServiceAccount's token.
	adminCredentials bool
	// standIn fails the Backups from the benchmark process instead of the operator's Backup
	// controller, which then does not run.
	standIn bool
	// timeline also watches the ScheduledBackups and reports where in the cadence every write
	// fell (timeline.go).
	timeline bool
}

func main() {
	var o options
	operatorMode := flag.Bool("run-operator", false, "internal: run the operator process (KUBECONFIG names the API server)")
	metricsAddr := flag.String("metrics-addr", "", "internal: metrics address of the operator process")
	flag.IntVar(&o.schedules, "schedules", 200, "number of ScheduledBackups")
	flag.IntVar(&o.namespaces, "namespaces", 1, "namespaces the ScheduledBackups are spread over")
	flag.DurationVar(&o.cadence, "cadence", 10*time.Second, "schedule cadence (whole seconds dividing a minute)")
	flag.DurationVar(&o.duration, "duration", 90*time.Second, "measured window")
	flag.DurationVar(&o.grace, "grace", 5*time.Second, "wait after the window for late Backups")
	flag.IntVar(&o.workers, "workers", 0, "operator reconcile workers (0: the controller's default, as `manager controller --scheduled-backup-workers`)")
	flag.StringVar(&o.profile, "apiserver-profile", "", "write a CPU profile of kube-apiserver over the window to this file")
	flag.StringVar(&o.opProfile, "operator-profile", "", "write a CPU profile of the operator process over the window to this file")
	flag.BoolVar(&o.adminCredentials, "admin-credentials", false,
		"run the operator with the control plane's admin client certificate instead of a token of its ServiceAccount bound to config/rbac")
	flag.BoolVar(&o.standIn, "stand-in", false,
		"fail every new Backup from the benchmark process (128 at a time) instead of running the operator's Backup controller")
	flag.BoolVar(&o.timeline, "timeline", false,
		"also watch the ScheduledBackups, and report where in the cadence the creates and every other write fell (adds the watch's load)")
	flag.Parse()
	var err error
	if *operatorMode {
		err = runOperator(*metricsAddr, o.workers, o.standIn)
	} else {
		err = runBenchmark(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func runBenchmark(o options) error {
	if o.cadence < time.Second || time.Minute%o.cadence != 0 || o.cadence%time.Second != 0 {
		return fmt.Errorf("cadence %v must be whole seconds dividing a minute", o.cadence)
	}
	env, err := kubetest.Start(kubetest.Options{})
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := newBench(ctx, env, o)
	if err != nil {
		return err
	}
	defer b.cleanup()
	res, err := b.run(ctx)
	if err != nil {
		return err
	}
	res.print(os.Stdout, o)
	return nil
}
