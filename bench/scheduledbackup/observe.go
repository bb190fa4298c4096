package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// creation is one Backup as the watch first saw it.
type creation struct {
	key  client.ObjectKey
	seen time.Time
}

// failWorkers is how many Backups the stand-in fails at a time: enough that a slot's Backups are
// failed at once even while the API server is slow to answer, so that the stand-in never holds a
// schedule's next slot back (its concurrency guard waits for the previous Backup to finish).
const failWorkers = 128

// observer watches every Backup: it records when each was first seen and, with -stand-in,
// standing in for the Backup controller, fails each new one at once.
type observer struct {
	c       client.WithWatch
	standIn bool
	mu      sync.Mutex
	created []creation
	failing chan *v1.Backup
	errs    chan error
}

func newObserver(c client.WithWatch, standIn bool) *observer {
	return &observer{c: c, standIn: standIn, failing: make(chan *v1.Backup, 100000), errs: make(chan error, 16)}
}

// run watches until ctx ends, reopening the watch where it stopped.
func (o *observer) run(ctx context.Context) error {
	var list v1.BackupList
	if err := o.c.List(ctx, &list); err != nil {
		return fmt.Errorf("listing Backups: %w", err)
	}
	rv := list.ResourceVersion
	if o.standIn {
		for w := range failWorkers {
			go o.failWorker(ctx, w)
		}
	}
	go func() {
		for ctx.Err() == nil {
			w, err := o.c.Watch(ctx, &v1.BackupList{}, &client.ListOptions{Raw: &metav1.ListOptions{
				ResourceVersion: rv, AllowWatchBookmarks: true}})
			if err != nil {
				o.report(fmt.Errorf("watching Backups: %w", err))
				time.Sleep(100 * time.Millisecond)
				continue
			}
			rv = o.consume(w, rv)
		}
	}()
	return nil
}

func (o *observer) consume(w watch.Interface, rv string) string {
	defer w.Stop()
	for ev := range w.ResultChan() {
		b, ok := ev.Object.(*v1.Backup)
		if !ok {
			continue
		}
		rv = b.ResourceVersion
		if ev.Type != watch.Added {
			continue
		}
		now := time.Now()
		o.mu.Lock()
		o.created = append(o.created, creation{key: client.ObjectKeyFromObject(b), seen: now})
		o.mu.Unlock()
		if o.standIn && b.Status.Phase == "" {
			o.failing <- b
		}
	}
	return rv
}

func (o *observer) failWorker(ctx context.Context, _ int) {
	for {
		select {
		case <-ctx.Done():
			return
		case b := <-o.failing:
			patch := []byte(`{"status":{"phase":"failed","error":"stand-in Backup controller: this benchmark runs no backup"}}`)
			err := o.c.Status().Patch(ctx, b, client.RawPatch("application/merge-patch+json", patch))
			if err != nil && ctx.Err() == nil && !strings.Contains(err.Error(), "not found") {
				o.report(fmt.Errorf("failing Backup %s: %w", b.Name, err))
			}
		}
	}
}

func (o *observer) report(err error) {
	select {
	case o.errs <- err:
	default:
	}
}

// snapshot returns what was seen so far.
func (o *observer) snapshot() []creation {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]creation(nil), o.created...)
}
