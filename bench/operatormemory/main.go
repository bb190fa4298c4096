package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

type managerFlag []string

func (m *managerFlag) String() string     { return strings.Join(*m, ",") }
func (m *managerFlag) Set(v string) error { *m = append(*m, v); return nil }

type options struct {
	managers   managerFlag
	pods       int
	secrets    int
	namespaces int
	settle     time.Duration
	workers    int
}

func main() {
	var o options
	flag.Var(&o.managers, "manager", "label=path of a manager binary to measure (repeatable)")
	flag.IntVar(&o.pods, "pods", 10000, "unrelated Pods to create")
	flag.IntVar(&o.secrets, "secrets", 10000, "unrelated Secrets to create")
	flag.IntVar(&o.namespaces, "namespaces", 10, "namespaces the unrelated objects are spread over")
	flag.DurationVar(&o.settle, "settle", 30*time.Second, "wait before each measurement")
	flag.IntVar(&o.workers, "workers", 32, "parallel creations")
	flag.Parse()
	ctrl.SetLogger(logr.Discard()) // the API server's warnings about the unrelated Pods
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if len(o.managers) == 0 {
		return fmt.Errorf("name at least one -manager label=path")
	}
	env, err := kubetest.Start(kubetest.Options{})
	if err != nil {
		return err
	}
	defer env.Stop()
	dir, err := os.MkdirTemp("", "operatormemory-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kubeconfig, err := env.AdminKubeconfig()
	if err != nil {
		return err
	}
	kubeconfigPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return err
	}
	ctx := context.Background()
	var procs []*managerProcess
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	for _, m := range o.managers {
		label, path, ok := strings.Cut(m, "=")
		if !ok {
			return fmt.Errorf("-manager %q: want label=path", m)
		}
		p, err := startManager(ctx, label, path, kubeconfigPath, dir)
		if err != nil {
			return err
		}
		procs = append(procs, p)
	}
	fmt.Printf("%d manager(s) started; settling %s\n", len(procs), o.settle)
	time.Sleep(o.settle)
	before := measureAll(ctx, procs)

	start := time.Now()
	if err := createObjects(ctx, env, o); err != nil {
		return err
	}
	fmt.Printf("created %d Pods and %d Secrets in %d namespaces and one Cluster in %s; settling %s\n",
		o.pods, o.secrets, o.namespaces, time.Since(start).Round(time.Second), o.settle)
	time.Sleep(o.settle)
	after := measureAll(ctx, procs)

	fmt.Println()
	fmt.Printf("%-12s %14s %14s %14s %14s\n", "manager", "RSS empty", "RSS full", "heap empty", "heap full")
	for i, p := range procs {
		fmt.Printf("%-12s %14s %14s %14s %14s\n", p.label, mib(before[i].rss), mib(after[i].rss), mib(before[i].heap), mib(after[i].heap))
	}
	for _, p := range procs {
		if err := p.alive(); err != nil {
			return fmt.Errorf("manager %s: %w\n%s", p.label, err, p.tail())
		}
	}
	return nil
}

func mib(b int64) string {
	if b < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}
