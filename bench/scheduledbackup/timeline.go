package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// writeKind is what a watch event shows was written.
type writeKind int

const (
	// kindBackupWrite is a change of a Backup other than its deletion: its status (the failure),
	// its finalizers, its labels.
	kindBackupWrite writeKind = iota
	// kindBackupDelete is a Backup's deletion, when the watch first shows it: a deletionTimestamp,
	// or the object gone if it had no finalizer.
	kindBackupDelete
	// kindScheduleWrite is a change of a ScheduledBackup: in the window, its status.
	kindScheduleWrite
	kinds
)

var kindNames = [kinds]string{"Backup writes", "Backup deletes", "schedule writes"}

// write is one write the watches saw, when they saw it.
type write struct {
	kind writeKind
	seen time.Time
}

// timeline is where in the cadence the writes fell over the window: the creates, and every other
// write the watches saw, by second from the slot, as a mean per slot; and how many of those other
// writes came while a slot's creates went on (from the slot to its last create), which the
// creates then competed with.
type timeline struct {
	slots int
	// creates and others are counts by second from the slot, summed over the window's slots.
	creates []float64
	others  [kinds][]float64
	// duringCreates counts the other writes seen between a window slot and its last create, by kind.
	duringCreates [kinds]int
}

// tallyTimeline buckets the creations and writes seen in [t0, end).
func (r *result) tallyTimeline(seen []creation, writes []write, t0, end time.Time, cadence time.Duration) {
	n := int(cadence / time.Second)
	// The window's slots are t0, t0+cadence, ... before end.
	tl := &timeline{slots: int((end.Sub(t0) + cadence - 1) / cadence), creates: make([]float64, n)}
	for k := range tl.others {
		tl.others[k] = make([]float64, n)
	}
	inWindow := func(t time.Time) (int, bool) {
		if t.Before(t0) || !t.Before(end) {
			return 0, false
		}
		return int(t.Sub(t0) % cadence / time.Second), true
	}
	lastCreate := map[int64]time.Time{} // by slot, in Unix seconds: slots parsed and truncated differ in location
	for _, c := range seen {
		slot, ok := slotOfName(c.key.Name)
		if !ok {
			continue
		}
		if s, ok := inWindow(c.seen); ok {
			tl.creates[s]++
		}
		if c.seen.After(lastCreate[slot.Unix()]) {
			lastCreate[slot.Unix()] = c.seen
		}
	}
	for _, w := range writes {
		if s, ok := inWindow(w.seen); ok {
			tl.others[w.kind][s]++
		}
		// A slot's creates may run past the next slot: any window slot whose creates were still
		// going on counts the write (once).
		for slot := t0; slot.Before(end) && !slot.After(w.seen); slot = slot.Add(cadence) {
			if !w.seen.After(lastCreate[slot.Unix()]) {
				tl.duringCreates[w.kind]++
				break
			}
		}
	}
	r.timeline = tl
}

// print writes the timeline, one line per second of the cadence.
func (tl *timeline) print(w io.Writer) {
	if tl == nil || tl.slots == 0 {
		return
	}
	per := func(v float64) string { return fmt.Sprintf("%6.0f", v/float64(tl.slots)) }
	fmt.Fprintf(w, "the cadence, second by second from the slot (mean per slot; creates, %s, as the watches saw them):\n",
		strings.Join(kindNames[:], ", "))
	for s := range tl.creates {
		fmt.Fprintf(w, "  %2d-%2ds %s %s %s %s\n", s, s+1, per(tl.creates[s]),
			per(tl.others[kindBackupWrite][s]), per(tl.others[kindBackupDelete][s]), per(tl.others[kindScheduleWrite][s]))
	}
	var parts []string
	for k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %.0f", kindNames[k], float64(tl.duringCreates[k])/float64(tl.slots)))
	}
	fmt.Fprintf(w, "other writes during a slot's creates (slot to its last create, mean per slot): %s\n", strings.Join(parts, ", "))
}
