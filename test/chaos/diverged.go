package chaos

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// Divergence is an instance the operator listed in status.divergedInstances after a fault (a
// former primary killed with a transaction in its binary log that no replica received: its client
// never saw the COMMIT succeed), what it held that the primary did not, and how the checker
// recovered it.
type Divergence struct {
	Instance string `json:"instance"`
	// Errant is its gtid_executed minus the primary's.
	Errant string `json:"errant,omitempty"`
	// ExtraRows are the checker's rows on it and not on the primary; Acknowledged those of them
	// the writer saw acknowledged (a lost write: must be empty) and Unexplained those neither
	// acknowledged nor of unknown outcome.
	ExtraRows    []int64 `json:"extraRows,omitempty"`
	Acknowledged []int64 `json:"acknowledged,omitempty"`
	Unexplained  []int64 `json:"unexplained,omitempty"`
	// Recovery is what the checker did: the documented human recovery (PVC and Pod deleted, the
	// name taken out of status.divergedInstances; the operator then creates a new instance that
	// clones the primary).
	Recovery string `json:"recovery,omitempty"`
	Error    string `json:"error,omitempty"`
}

// settledButDiverged: the Cluster has a confirmed primary, some instances are listed as diverged,
// and every other Pod is ready (the Cluster will not become Ready without a human).
func settledButDiverged(c *mysqlv1.Cluster, pods []corev1.Pod) []string {
	st := c.Status
	if len(st.DivergedInstances) == 0 || st.CurrentPrimary == "" || st.CurrentPrimary != st.TargetPrimary {
		return nil
	}
	for _, p := range pods {
		if !slices.Contains(st.DivergedInstances, p.Name) && (p.DeletionTimestamp != nil || !podReady(&p)) {
			return nil
		}
	}
	return st.DivergedInstances
}

// WaitReadyOrDiverged polls until the Cluster is Ready, or settled but for diverged instances,
// which it then returns.
func (e *Env) WaitReadyOrDiverged(ctx context.Context, t Target, timeout time.Duration) (*mysqlv1.Cluster, []corev1.Pod, []string, error) {
	return e.waitSettled(ctx, t, timeout, true)
}

// InspectDiverged compares a diverged instance with the primary: its errant GTIDs, the checker's
// rows it holds and the primary does not, and which of them were acknowledged.
func (e *Env) InspectDiverged(ctx context.Context, a Account, primary, name string, pods []corev1.Pod, ws WriterStats, firstID int64) Divergence {
	d := Divergence{Instance: name}
	addr := map[string]string{}
	for _, p := range pods {
		addr[p.Name] = fmt.Sprintf("%s:3306", p.Status.PodIP)
	}
	deadline := time.Now().Add(30 * time.Second)
	read := func(inst string) (gtid.Set, map[int64]bool, error) {
		c, err := e.newConn(a, addr[inst], 10*time.Second)
		if err != nil {
			return gtid.Set{}, nil, err
		}
		defer c.close()
		set, err := retry(ctx, deadline, func() (gtid.Set, error) { return executed(ctx, c) })
		if err != nil {
			return set, nil, err
		}
		rows, err := retry(ctx, deadline, func() (map[int64]bool, error) { return idsFrom(ctx, c, firstID) })
		return set, rows, err
	}
	dSet, dRows, err := read(name)
	if err != nil {
		d.Error = name + ": " + err.Error()
		return d
	}
	pSet, pRows, err := read(primary)
	if err != nil {
		d.Error = primary + ": " + err.Error()
		return d
	}
	d.Errant = gtid.Errant(dSet, pSet).String()
	acked, unknown := map[int64]bool{}, map[int64]bool{}
	for _, ack := range ws.Acks {
		acked[ack.ID] = true
	}
	for _, id := range ws.Unknown {
		unknown[id] = true
	}
	for id := range dRows {
		if pRows[id] {
			continue
		}
		d.ExtraRows = append(d.ExtraRows, id)
		switch {
		case acked[id]:
			d.Acknowledged = append(d.Acknowledged, id)
		case !unknown[id]:
			d.Unexplained = append(d.Unexplained, id)
		}
	}
	slices.Sort(d.ExtraRows)
	slices.Sort(d.Acknowledged)
	slices.Sort(d.Unexplained)
	return d
}

// idsFrom reads every id of the checker's table from first on.
func idsFrom(ctx context.Context, c *conn, first int64) (map[int64]bool, error) {
	sc, err := c.get(ctx)
	if err != nil {
		c.drop()
		return nil, err
	}
	rows, err := sc.QueryContext(ctx, "SELECT id FROM chaos.writes WHERE id >= ?", first)
	if err != nil {
		c.drop()
		return nil, err
	}
	defer rows.Close()
	present := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		present[id] = true
	}
	return present, rows.Err()
}

// RecoverDiverged does what docs/replication-failover.md leaves to a human once the diverged
// instance's extra transactions are known to be unacknowledged: it deletes the instance's PVC and
// Pod (the PVC first, so the operator does not recreate the Pod on it), waits until both are gone,
// and takes the name out of status.divergedInstances. The operator then adds a new instance, which
// clones the primary.
func (e *Env) RecoverDiverged(ctx context.Context, t Target, name string) (string, error) {
	key := types.NamespacedName{Namespace: t.Namespace, Name: name}
	meta := metav1.ObjectMeta{Namespace: t.Namespace, Name: name}
	if err := client.IgnoreNotFound(e.Client.Delete(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: meta})); err != nil {
		return "", fmt.Errorf("deleting PVC %s: %w", name, err)
	}
	if err := client.IgnoreNotFound(e.Client.Delete(ctx, &corev1.Pod{ObjectMeta: meta})); err != nil {
		return "", fmt.Errorf("deleting Pod %s: %w", name, err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		podErr := e.Client.Get(ctx, key, &corev1.Pod{})
		pvcErr := e.Client.Get(ctx, key, &corev1.PersistentVolumeClaim{})
		if apierrors.IsNotFound(podErr) && apierrors.IsNotFound(pvcErr) {
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("Pod and PVC %s not gone after 3 minutes (Pod: %v, PVC: %v)", name, podErr, pvcErr)
		}
		time.Sleep(250 * time.Millisecond)
	}
	for attempt := 0; ; attempt++ {
		c, err := e.Cluster(ctx, t)
		if err != nil {
			return "", err
		}
		base := c.DeepCopy()
		c.Status.DivergedInstances = slices.DeleteFunc(c.Status.DivergedInstances, func(n string) bool { return n == name })
		err = e.Client.Status().Patch(ctx, c, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || attempt > 10 {
			return "", fmt.Errorf("taking %s out of status.divergedInstances: %w", name, err)
		}
	}
	return fmt.Sprintf("PVC and Pod %s deleted, %s taken out of status.divergedInstances at %s", name, name,
		time.Now().UTC().Format("15:04:05")), nil
}
