package scheduledbackup

import (
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// slotLayout is the UTC timestamp suffix of the names BackupName gives scheduled Backups.
const slotLayout = "20060102150405"

// child is one Backup carrying a ScheduledBackup's label, with the slot its name encodes.
type child struct {
	backup *v1.Backup
	// slot is the UTC slot of a <schedule>-<YYYYMMDDHHMMSS> name; zero for any other name.
	slot time.Time
}

// order is the time a child sorts by: its slot, else its creation.
func (c child) order() time.Time {
	if !c.slot.IsZero() {
		return c.slot
	}
	return c.backup.CreationTimestamp.UTC()
}

func (c child) terminating() bool { return c.backup.DeletionTimestamp != nil }

// children are the Backups of one ScheduledBackup, oldest first (ties by name), so every
// decision over them is deterministic.
type children []child

// newChildren indexes the Backups labelled for sb.
func newChildren(sb *v1.ScheduledBackup, backups []v1.Backup) children {
	out := make(children, 0, len(backups))
	for i := range backups {
		b := &backups[i]
		if b.Labels[v1.ScheduledBackupLabel] != sb.Name {
			continue
		}
		out = append(out, child{backup: b, slot: slotOf(sb, b.Name)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := out[i].order(), out[j].order(); !a.Equal(b) {
			return a.Before(b)
		}
		return out[i].backup.Name < out[j].backup.Name
	})
	return out
}

// slotOf inverts BackupName: the slot a child name encodes, or zero.
func slotOf(sb *v1.ScheduledBackup, name string) time.Time {
	suffix, ok := strings.CutPrefix(name, sb.Name+"-")
	if !ok || len(suffix) != len(slotLayout) {
		return time.Time{}
	}
	t, err := time.ParseInLocation(slotLayout, suffix, time.UTC)
	if err != nil {
		return time.Time{}
	}
	return t
}

// newestSlotNotAfter is the child with the latest slot not after now.
func (cs children) newestSlotNotAfter(now time.Time) (child, bool) {
	for i := len(cs) - 1; i >= 0; i-- {
		if c := cs[i]; !c.slot.IsZero() && !c.slot.After(now) {
			return c, true
		}
	}
	return child{}, false
}

// running is the first child that is neither completed nor failed and not being deleted.
func (cs children) running() (child, bool) {
	for _, c := range cs {
		if !c.backup.IsDone() && !c.terminating() {
			return c, true
		}
	}
	return child{}, false
}

// newestDone is the latest child that completed or failed.
func (cs children) newestDone() (child, bool) {
	for i := len(cs) - 1; i >= 0; i-- {
		if b := cs[i].backup; b.IsDone() && b.Status.Phase != v1.BackupPhaseSuperseded { // superseded ones never ran
			return cs[i], true
		}
	}
	return child{}, false
}

// hasImmediate reports whether a child carries the immediate-backup label.
func (cs children) hasImmediate() bool {
	for _, c := range cs {
		if c.backup.Labels[v1.ImmediateBackupLabel] == "true" {
			return true
		}
	}
	return false
}

// inPhase are the children in phase that are not being deleted, newest first.
func (cs children) inPhase(phase v1.BackupPhase) []child {
	var out []child
	for i := len(cs) - 1; i >= 0; i-- {
		if c := cs[i]; c.backup.Status.Phase == phase && !c.terminating() {
			out = append(out, c)
		}
	}
	return out
}

// buildScheduledBackup is the Backup a ScheduledBackup creates for slot: deterministic name,
// labels, the owner the spec asks for, and the inherited backup settings. cluster may be nil
// only when no owner reference to it is needed.
func buildScheduledBackup(sb *v1.ScheduledBackup, cluster *v1.Cluster, slot time.Time, immediate bool) *v1.Backup {
	labels := map[string]string{
		v1.ScheduledBackupLabel: sb.Name,
		v1.ClusterLabel:         sb.Spec.Cluster.Name,
	}
	if immediate {
		labels[v1.ImmediateBackupLabel] = "true"
	}
	b := &v1.Backup{
		ObjectMeta: metav1.ObjectMeta{
			Name:            sb.BackupName(slot),
			Namespace:       sb.Namespace,
			Labels:          labels,
			OwnerReferences: childOwners(sb, cluster),
		},
		Spec: v1.BackupSpec{
			Cluster:        sb.Spec.Cluster,
			Method:         sb.Spec.Method,
			Target:         sb.Spec.Target,
			Online:         copyPtr(sb.Spec.Online),
			DeletionPolicy: sb.Spec.DeletionPolicy,
		},
	}
	if sb.Spec.Timeout != nil {
		b.Spec.Timeout = sb.Spec.Timeout.DeepCopy()
	}
	return b
}

// childOwners are the owner references spec.backupOwnerReference asks for: a controller
// reference that blocks the owner's foreground deletion, as garbage collection expects.
func childOwners(sb *v1.ScheduledBackup, cluster *v1.Cluster) []metav1.OwnerReference {
	switch sb.Spec.BackupOwnerReference {
	case v1.BackupOwnerReferenceSelf:
		return ownerRef("ScheduledBackup", sb)
	case v1.BackupOwnerReferenceCluster:
		if cluster != nil {
			return ownerRef("Cluster", cluster)
		}
	}
	return nil
}

func ownerRef(kind string, owner metav1.Object) []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: v1.GroupVersion.String(), Kind: kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
