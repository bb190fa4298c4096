package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// observer watches every Backup and ScheduledBackup: it records when each Backup was first seen
// and when the watches saw every other write (see timeline.go) and, with -stand-in, standing in
// for the Backup controller, fails each new Backup at once.
type observer struct {
	c        client.WithWatch
	standIn  bool
	timeline bool
	mu       sync.Mutex
	created  []creation
	writes   []write
	deleting map[types.UID]bool
	failing  chan *v1.Backup
	errs     chan error
}

func newObserver(c client.WithWatch, standIn, timeline bool) *observer {
	return &observer{c: c, standIn: standIn, timeline: timeline, deleting: map[types.UID]bool{},
		failing: make(chan *v1.Backup, 100000), errs: make(chan error, 16)}
}

// run watches until ctx ends, reopening the watches where they stopped: the Backups, and with
// -timeline the ScheduledBackups.
func (o *observer) run(ctx context.Context) error {
	var backups v1.BackupList
	if err := o.c.List(ctx, &backups); err != nil {
		return fmt.Errorf("listing Backups: %w", err)
	}
	if o.timeline {
		var schedules v1.ScheduledBackupList
		if err := o.c.List(ctx, &schedules); err != nil {
			return fmt.Errorf("listing ScheduledBackups: %w", err)
		}
		go o.watch(ctx, &v1.ScheduledBackupList{}, schedules.ResourceVersion, o.scheduleEvent)
	}
	if o.standIn {
		for w := range failWorkers {
			go o.failWorker(ctx, w)
		}
	}
	go o.watch(ctx, &v1.BackupList{}, backups.ResourceVersion, o.backupEvent)
	return nil
}

// watch watches list's kind from rv until ctx ends, handing every event to handle.
func (o *observer) watch(ctx context.Context, list client.ObjectList, rv string, handle func(watch.Event)) {
	for ctx.Err() == nil {
		w, err := o.c.Watch(ctx, list, &client.ListOptions{Raw: &metav1.ListOptions{
			ResourceVersion: rv, AllowWatchBookmarks: true}})
		if err != nil {
			o.report(fmt.Errorf("watching %T: %w", list, err))
			time.Sleep(100 * time.Millisecond)
			continue
		}
		failed := false
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				// An expired resourceVersion ends the watch with this; the next one starts where
				// this one stopped, after a pause, and the report says the figures may have a gap.
				o.report(fmt.Errorf("watching %T: %w", list, apierrors.FromObject(ev.Object)))
				failed = true
				continue
			}
			if obj, ok := ev.Object.(client.Object); ok {
				rv = obj.GetResourceVersion()
			}
			handle(ev)
		}
		w.Stop()
		if failed {
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// backupEvent records a Backup's creation (and hands a new one to the stand-in) or another write.
func (o *observer) backupEvent(ev watch.Event) {
	b, ok := ev.Object.(*v1.Backup)
	if !ok || ev.Type == watch.Bookmark || (!o.timeline && ev.Type != watch.Added) {
		return
	}
	now := time.Now()
	o.mu.Lock()
	switch {
	case ev.Type == watch.Added:
		o.created = append(o.created, creation{key: client.ObjectKeyFromObject(b), seen: now})
	case o.deleting[b.UID] && ev.Type == watch.Deleted:
		// The write that removed its last finalizer: the API server deletes the object then,
		// and the watch shows that write as the deletion.
		o.writes = append(o.writes, write{kind: kindBackupWrite, seen: now})
		delete(o.deleting, b.UID)
	case o.deleting[b.UID]:
		o.writes = append(o.writes, write{kind: kindBackupWrite, seen: now})
	case ev.Type == watch.Deleted || b.DeletionTimestamp != nil:
		o.writes = append(o.writes, write{kind: kindBackupDelete, seen: now})
		if ev.Type != watch.Deleted {
			o.deleting[b.UID] = true
		}
	default:
		o.writes = append(o.writes, write{kind: kindBackupWrite, seen: now})
	}
	o.mu.Unlock()
	if o.standIn && ev.Type == watch.Added && b.Status.Phase == "" {
		o.failing <- b
	}
}

// scheduleEvent records a change of a ScheduledBackup.
func (o *observer) scheduleEvent(ev watch.Event) {
	if _, ok := ev.Object.(*v1.ScheduledBackup); !ok || ev.Type != watch.Modified {
		return
	}
	now := time.Now()
	o.mu.Lock()
	o.writes = append(o.writes, write{kind: kindScheduleWrite, seen: now})
	o.mu.Unlock()
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

// snapshot returns what was seen so far: the creations and the other writes.
func (o *observer) snapshot() ([]creation, []write) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]creation(nil), o.created...), append([]write(nil), o.writes...)
}
