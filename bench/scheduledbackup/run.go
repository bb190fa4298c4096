package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/bench/internal/procstat"
)

// run starts the observer and the operator, waits until every schedule was checked once, then
// measures a window of whole slots and stops the operator.
func (b *bench) run(ctx context.Context) (*result, error) {
	wc, err := client.NewWithWatch(b.env.Config, client.Options{Scheme: b.env.Scheme})
	if err != nil {
		return nil, err
	}
	obs := newObserver(wc, b.o.standIn, b.o.timeline)
	if err := obs.run(ctx); err != nil {
		return nil, err
	}
	started := time.Now()
	if err := b.startOperator(ctx); err != nil {
		return nil, err
	}
	if err := b.waitAllChecked(ctx); err != nil {
		return nil, err
	}
	res := &result{schedules: len(b.names), startup: time.Since(started)}
	apiserver, etcd := procstat.ChildrenNamed("kube-apiserver"), procstat.ChildrenNamed("etcd")
	t0 := time.Now().Add(2 * time.Second).Truncate(b.o.cadence).Add(b.o.cadence)
	end := t0.Add(b.o.duration)

	sleepUntil(t0.Add(-time.Second))
	profiled := make(chan error, 2)
	go func() { profiled <- profileIf(ctx, b.o.profile, b.o.duration, profileServer, b.env.Config) }()
	go func() { profiled <- profileIf(ctx, b.o.opProfile, b.o.duration, profileOperator, b.metrics) }()
	m0, err := scrape(ctx, b.metrics)
	if err != nil {
		return nil, err
	}
	c0, _ := procstat.CPUTime(b.op.Pid())

	busy0, load0 := procstat.MachineBusy(), procstat.LoadAverage()
	self0, _ := procstat.CPUTime(os.Getpid())
	a0, e0 := procstat.TotalCPU(apiserver), procstat.TotalCPU(etcd)
	sleepUntil(end.Add(-time.Second))
	m1, err := scrape(ctx, b.metrics)
	if err != nil {
		return nil, err
	}
	c1, _ := procstat.CPUTime(b.op.Pid())

	a1, e1 := procstat.TotalCPU(apiserver), procstat.TotalCPU(etcd)
	res.machineBusy, res.load = procstat.MachineBusy()-busy0, [2]string{load0, procstat.LoadAverage()}
	self1, _ := procstat.CPUTime(os.Getpid())
	res.benchCPU = self1 - self0
	sleepUntil(end.Add(b.o.grace))

	created, writes := obs.snapshot()
	res.tally(created, b.names, t0, end, b.o.cadence)
	if b.o.timeline {
		res.tallyTimeline(created, writes, t0, end, b.o.cadence)
	}
	res.metrics(m0, m1)
	res.operatorWindowCPU, res.apiserverWindowCPU, res.etcdWindowCPU = c1-c0, a1-a0, e1-e0
	if res.operatorCPU, res.operatorRSS, err = b.stopOperator(); err != nil {
		return nil, err
	}
	for range 2 {
		if err := <-profiled; err != nil {
			res.observerErrors = append(res.observerErrors, err.Error())
		}
	}
	// The watches still run (until ctx ends), so the channel is drained, not closed.
	for drained := false; !drained; {
		select {
		case err := <-obs.errs:
			res.observerErrors = append(res.observerErrors, err.Error())
		default:
			drained = true
		}
	}
	return res, nil
}

// waitAllChecked waits until the operator has checked every schedule once (lastCheckTime set).
func (b *bench) waitAllChecked(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var list v1.ScheduledBackupList
		if err := b.env.Client.List(ctx, &list); err != nil {
			return false, err
		}
		for _, sb := range list.Items {
			if sb.Status.LastCheckTime == nil {
				return false, nil
			}
		}
		return len(list.Items) == len(b.names), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the operator to check every schedule: %w", err)
	}
	return nil
}

// profileIf runs profiler over the window d when path is set.
func profileIf[T any](ctx context.Context, path string, d time.Duration,
	profiler func(context.Context, T, time.Duration, string) error, target T) error {
	if path == "" {
		return nil
	}
	return profiler(ctx, target, d, path)
}

func sleepUntil(t time.Time) {
	if d := time.Until(t); d > 0 {
		time.Sleep(d)
	}
}
