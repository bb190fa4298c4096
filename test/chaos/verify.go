package chaos

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// InstanceCheck is what one instance holds after a fault.
type InstanceCheck struct {
	Instance string `json:"instance"`
	Role     string `json:"role"`
	// Missing are acknowledged ids the instance lacks (on a replica: after it caught up with the
	// primary's gtid_executed, or after the catch-up timeout).
	Missing []int64 `json:"missing,omitempty"`
	// Errant are the instance's transactions the primary never had (replicas).
	Errant string `json:"errant,omitempty"`
	// CaughtUp: the replica's gtid_executed contained the primary's within the timeout.
	CaughtUp bool   `json:"caughtUp"`
	Error    string `json:"error,omitempty"`
}

// Verify checks every instance of a Ready Cluster: the primary holds every acknowledged id; each
// replica, once it has executed what the primary had executed, holds them too and no transaction
// the primary lacks. Each instance is read through its Pod IP.
func (e *Env) Verify(ctx context.Context, a Account, primary string, pods []corev1.Pod, acks []Ack, catchUp time.Duration) []InstanceCheck {
	addr := map[string]string{}
	for _, p := range pods {
		addr[p.Name] = fmt.Sprintf("%s:3306", p.Status.PodIP)
	}
	var out []InstanceCheck
	deadline := time.Now().Add(catchUp)
	pc, err := e.newConn(a, addr[primary], 10*time.Second)
	if err != nil {
		return []InstanceCheck{{Instance: primary, Role: "primary", Error: err.Error()}}
	}
	defer pc.close()
	primarySet := func() (gtid.Set, error) {
		return retry(ctx, deadline, func() (gtid.Set, error) { return executed(ctx, pc) })
	}
	check := InstanceCheck{Instance: primary, Role: "primary", CaughtUp: true}
	if present, err := retry(ctx, deadline, func() (map[int64]bool, error) { return ids(ctx, pc, acks) }); err != nil {
		check.Error = err.Error()
	} else {
		check.Missing = Missing(acks, present)
	}
	out = append(out, check)
	for _, p := range pods {
		if p.Name == primary {
			continue
		}
		out = append(out, e.verifyReplica(ctx, a, p.Name, addr[p.Name], primarySet, acks, catchUp))
	}
	return out
}

func (e *Env) verifyReplica(ctx context.Context, a Account, name, addr string, primarySet func() (gtid.Set, error),
	acks []Ack, catchUp time.Duration) InstanceCheck {
	check := InstanceCheck{Instance: name, Role: "replica"}
	rc, err := e.newConn(a, addr, 10*time.Second)
	if err != nil {
		check.Error = err.Error()
		return check
	}
	defer rc.close()
	want, err := primarySet()
	if err != nil {
		check.Error = "primary: " + err.Error()
		return check
	}
	deadline := time.Now().Add(catchUp)
	for {
		have, err := executed(ctx, rc)
		if err == nil && have.Contains(want) {
			check.CaughtUp = true
			break
		}
		if time.Now().After(deadline) {
			if err != nil {
				check.Error = err.Error()
			}
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	present, err := retry(ctx, deadline, func() (map[int64]bool, error) { return ids(ctx, rc, acks) })
	if err != nil {
		check.Error = err.Error()
		return check
	}
	check.Missing = Missing(acks, present)
	errant, err := errantAfterCommit(ctx, rc, primarySet)
	if err != nil {
		check.Error = err.Error()
	} else if !errant.IsEmpty() {
		check.Errant = errant.String()
	}
	return check
}

// commitWindow bounds how long a transaction a replica holds may still be on its way into the
// primary's gtid_executed. With AFTER_SYNC the primary adds a transaction to gtid_executed only
// after a replica acknowledged it, so while writers run a replica can already have applied a
// transaction the primary has not yet marked executed: a milliseconds window, which a busy node
// stretches.
const commitWindow = 5 * time.Second

// errantAfterCommit returns the replica's transactions the primary lacks. The replica's set is
// read first, then the primary's: the primary's only grows, so whatever the replica received from
// it is in a later read of it, once past the commit window. A set still missing from the primary
// after the window is errant.
func errantAfterCommit(ctx context.Context, rc *conn, primarySet func() (gtid.Set, error)) (gtid.Set, error) {
	// A demoted primary ends client sessions for a few seconds (its session sweep): a session
	// ended there is opened again.
	have, err := retry(ctx, time.Now().Add(commitWindow), func() (gtid.Set, error) { return executed(ctx, rc) })
	if err != nil {
		return gtid.Set{}, err
	}
	deadline := time.Now().Add(commitWindow)
	for {
		now, err := primarySet()
		if err != nil {
			return gtid.Set{}, err
		}
		errant := gtid.Errant(have, now)
		if errant.IsEmpty() || time.Now().After(deadline) || ctx.Err() != nil {
			return errant, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func executed(ctx context.Context, c *conn) (gtid.Set, error) {
	sc, err := c.get(ctx)
	if err != nil {
		c.drop()
		return gtid.Set{}, err
	}
	var text string
	if err := sc.QueryRowContext(ctx, "SELECT @@global.gtid_executed").Scan(&text); err != nil {
		c.drop()
		return gtid.Set{}, err
	}
	return gtid.Parse(text)
}

// ids reads which of the acknowledged ids the instance holds.
func ids(ctx context.Context, c *conn, acks []Ack) (map[int64]bool, error) {
	present := map[int64]bool{}
	if len(acks) == 0 {
		return present, nil
	}
	sc, err := c.get(ctx)
	if err != nil {
		c.drop()
		return nil, err
	}
	// The acks of several writers, each with ids of its own: the range spans them all.
	lo, hi := acks[0].ID, acks[0].ID
	for _, a := range acks {
		lo, hi = min(lo, a.ID), max(hi, a.ID)
	}
	rows, err := sc.QueryContext(ctx, "SELECT id FROM chaos.writes WHERE id BETWEEN ? AND ?", lo, hi)
	if err != nil {
		c.drop()
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		present[id] = true
	}
	return present, rows.Err()
}

// ClusterEvents returns "reason: message" of the Cluster's Events last seen in or after the second
// of since, oldest first; warningsOnly keeps Warnings. An Event's times are kept to the second:
// one recorded a moment after since, within its second, reads as earlier than since.
func (e *Env) ClusterEvents(ctx context.Context, t Target, since time.Time, warningsOnly bool) ([]string, error) {
	since = since.Truncate(time.Second)
	var list corev1.EventList
	if err := e.Client.List(ctx, &list, client.InNamespace(t.Namespace)); err != nil {
		return nil, err
	}
	items := list.Items
	slices.SortFunc(items, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	var out []string
	for _, ev := range items {
		if ev.InvolvedObject.Kind != "Cluster" || ev.InvolvedObject.Name != t.Name || eventTime(ev).Before(since) {
			continue
		}
		if warningsOnly && ev.Type != corev1.EventTypeWarning {
			continue
		}
		out = append(out, ev.Reason+": "+ev.Message)
	}
	return out, nil
}

func eventTime(ev corev1.Event) time.Time {
	switch {
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}

// retry calls f until it succeeds or the deadline passes (at least once), every 200 ms: an
// instance that just came back may refuse a connection or two.
func retry[T any](ctx context.Context, deadline time.Time, f func() (T, error)) (T, error) {
	for {
		v, err := f()
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return v, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
