package retention

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
)

// The retention Events, recorded on the Cluster.
var (
	evPassDeleted = kit.EventKind{Type: corev1.EventTypeNormal, Reason: "BackupRetention",
		Format: "Retention pass (%s) deleted %s"}

	evPassFailed = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "RetentionFailed",
		Format: "Retention pass failed: %s; nothing is stamped, retrying in %s"}
	evUnreadable = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "UnreadableBackupMetadata",
		Format: "%d backup(s) have an invalid metadata.json, or one dated in the future (a clock ahead), and are kept, and no binlog segment is deleted while they remain: %s"}
	evUnrestorable = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "UnrestorableBackups",
		Format: "%d backup(s) have a metadata.json but no archive of the size it records: no restore can use them; they are kept but do not count as backups: %s"}
	evForeign = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "ForeignBackups",
		Format: "%d backup(s) in this Cluster's directory (<path>/<serverName>/) were written by another Cluster (of namespace(s) %s), or by another incarnation of this one that it does not continue: they are not this Cluster's history. Those backups are kept and no binlog segment is deleted; remove them by hand once they are not needed: %s"}
	evInvalidPolicy = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "InvalidRetentionPolicy",
		Format: "%s; no retention pass runs until it is fixed"}
)

// maxEventRefs bounds the directories an Event names.
const maxEventRefs = 20

// describeRefs names backup directories as <name>/<id>, at most maxEventRefs of them.
func describeRefs(refs []objectstore.BackupRef) string {
	names := make([]string, 0, min(len(refs), maxEventRefs))
	for _, ref := range refs[:min(len(refs), maxEventRefs)] {
		names = append(names, ref.Name+"/"+ref.ID)
	}
	if n := len(refs) - len(names); n > 0 {
		names = append(names, fmt.Sprintf("and %d more", n))
	}
	return strings.Join(names, ", ")
}

// describeDeleted counts what a pass deleted, with bytes.
func describeDeleted(r retentionpass.Report) string {
	return fmt.Sprintf("%d expired base backup(s) (%d bytes), %d binlog segment(s) (%d bytes), %d incomplete backup director(ies) (%d bytes), %d stale multipart upload(s)",
		len(r.Expired), r.ExpiredBytes, r.Segments, r.SegmentBytes, len(r.Incomplete), r.IncompleteBytes, r.AbortedUploads)
}

// describePolicy renders a Cluster's retention settings for Events and logs.
func describePolicy(b *v1.BackupConfiguration) string {
	if b == nil {
		return "none"
	}
	var parts []string
	if b.RetentionPolicy != "" {
		parts = append(parts, "window "+b.RetentionPolicy)
	}
	if b.RetentionCount != nil {
		parts = append(parts, fmt.Sprintf("count %d", *b.RetentionCount))
	}
	if b.RetentionSize != nil {
		parts = append(parts, "size "+b.RetentionSize.String())
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
