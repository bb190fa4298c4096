package instance

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/pitr"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// recoveryRetryMax bounds the wait between two restore attempts after a failure.
const recoveryRetryMax = time.Minute

// pitrSegmentsDir is where a point-in-time recovery downloads the segments it replays: next to
// the data directory, on the instance's volume.
const pitrSegmentsDir = ".pitr-segments"

// restoreParameters are the my.cnf settings the verification server of a restore takes from the
// Cluster: those a data directory needs to start, and its memory footprint.
var restoreParameters = []string{"innodb_page_size", "lower_case_table_names", "innodb_buffer_pool_size",
	"innodb_redo_log_capacity", "performance_schema"}

// recoverUntilDone restores the backup bootstrap.recovery names into the empty data directory
// and verifies it, before mysqld ever starts on it. A failure is reported on the Cluster
// (condition Recovered False with its reason, a Warning Event) and retried with a growing delay:
// the data directory is left empty, never initialized, so the instance never serves until a
// restore succeeds.
func (m *manager) recoverUntilDone(ctx context.Context) error {
	var reported string
	for attempt := 1; ; attempt++ {
		c, err := m.readCluster(ctx)
		if err != nil {
			return err
		}
		rec := c.Recovery()
		if rec == nil {
			return errRecoveryRemoved
		}
		if attempt == 1 {
			m.reportRecovery(ctx, metav1.ConditionFalse, v1alpha1.ReasonRecoveryRestoring,
				"restoring the first instance "+m.cfg.Instance+" from "+describeRecovery(rec), nil)
		}
		begin := m.deps.Clock.Now()
		src, err := m.recoverOnce(ctx, c)
		if err == nil {
			m.deps.Log.Info("restored from the backup", "backup", src.backup, "path", src.path,
				"gtidExecuted", src.md.GTIDExecuted, "took", m.deps.Clock.Since(begin).Round(time.Millisecond))
			msg := fmt.Sprintf("instance %s restored from %s (%s) and verified: sha256 %s, gtid_executed %q",
				m.cfg.Instance, src.backup, src.path, src.md.SHA256, src.md.GTIDExecuted)
			if r := src.replayed; r != nil {
				msg += fmt.Sprintf("; then %d transactions replayed from %d archived binlog segments of cluster %s to the %s: gtid_executed %q",
					r.Applied.Count(), r.Segments, src.archive, src.target, r.Executed)
			}
			m.reportRecovery(ctx, metav1.ConditionTrue, v1alpha1.ReasonRecoveryRestored, msg, m.recoveryStatus(src),
				eventRecovered.With(msg))
			_, err := ClearClonePending(m.cfg.DataDir)
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("restoring from %s: %w", describeRecovery(rec), ctx.Err())
		}
		reason := RecoveryFailureReason(err)
		m.deps.Log.Error(err, "restore failed; the data directory stays empty and the restore is retried", "reason", reason, "attempt", attempt)
		if msg := err.Error(); msg != reported {
			reported = msg
			msg = "the restore of " + m.cfg.Instance + " from " + describeRecovery(rec) + " failed (the instance stays empty and does not serve; retried): " + msg
			m.reportRecovery(ctx, metav1.ConditionFalse, reason, msg, nil,
				eventRecoveryFailed.With(msg))
		}
		if err := m.sleep(ctx, min(time.Duration(attempt)*5*time.Second, recoveryRetryMax)); err != nil {
			return fmt.Errorf("restoring from %s: %w", describeRecovery(rec), err)
		}
	}
}

// recoverOnce locates the backup and restores it, verified, into the data directory, which a
// marker flags as unfinished until the restore is reported: a restart in between discards the
// data directory (DiscardUnfinishedClone) and restores again. On failure the data directory is
// left empty.
func (m *manager) recoverOnce(ctx context.Context, c *v1alpha1.Cluster) (recoverySource, error) {
	src, err := locateRecovery(ctx, m.deps.Client, m.cfg.Namespace, c.Recovery())
	if err != nil {
		return recoverySource{}, err
	}
	if err := os.MkdirAll(m.cfg.DataDir, 0o750); err != nil {
		return recoverySource{}, fmt.Errorf("creating the data directory: %w", err)
	}
	if err := MarkClonePending(m.cfg.DataDir); err != nil {
		return recoverySource{}, err
	}
	root := m.cfg.MysqldRoot
	if root == "/" {
		root = ""
	}
	cmd := localmysqld.Command{Argv: m.cfg.MysqldCommand, Root: root}
	if m.cfg.MysqldUser != "" {
		cmd.Args = []string{"--user=" + m.cfg.MysqldUser}
	}
	// The backup's root password is the source Cluster's; this Cluster's manager logs in with its own.
	rootPassword, err := m.readPassword(ctx, specs.UserRoot)
	if err != nil {
		return recoverySource{}, fmt.Errorf("reading root's password: %w", err)
	}
	// So does the application owner's: applications connect with this Cluster's <cluster>-app.
	appPassword, err := m.readPassword(ctx, specs.UserApp)
	if err != nil {
		return recoverySource{}, fmt.Errorf("reading the application owner's password: %w", err)
	}
	_, owner := specs.AppAccount(c)
	accounts := []restore.Credential{{User: owner, Host: "%", Password: appPassword}}
	runDir := filepath.Join(m.cfg.RunDir, "restore")
	keep := []string{clonePendingMarker}
	restorePassword, restoreAccounts := rootPassword, accounts
	if src.target != nil {
		restorePassword, restoreAccounts = "", nil // set after the replay, which could otherwise undo them
	}
	_, err = restore.Restore(ctx, restore.Config{Store: src.store, Ref: src.md.Ref(), DataDir: m.cfg.DataDir,
		RunDir: runDir, Mysqld: cmd, MysqldArgs: m.restoreArgs(c), Keep: keep, RootPassword: restorePassword,
		Accounts: restoreAccounts})
	_ = os.RemoveAll(runDir)
	if err == nil && src.target != nil {
		src.replayed, err = m.replay(ctx, c, src, cmd, rootPassword, accounts)
		if err != nil {
			if cerr := restore.Empty(m.cfg.DataDir, keep); cerr != nil {
				err = fmt.Errorf("%w; and emptying %s failed: %w", err, m.cfg.DataDir, cerr)
			}
		}
	}
	if err != nil {
		if _, cerr := ClearClonePending(m.cfg.DataDir); cerr != nil {
			m.deps.Log.Error(cerr, "clearing the restore marker")
		}
		return recoverySource{}, fmt.Errorf("restoring %s (%s): %w", src.backup, src.path, err)
	}
	return src, nil
}

// replay carries the restored base backup to the recovery target with the archived binlogs
// (pitr.Replay). The segments are downloaded next to the data directory, on the instance's
// volume, and removed afterwards.
func (m *manager) replay(ctx context.Context, c *v1alpha1.Cluster, src recoverySource, cmd localmysqld.Command,
	rootPassword string, accounts []restore.Credential) (*pitr.Result, error) {
	runDir := filepath.Join(m.cfg.RunDir, "replay")
	defer os.RemoveAll(runDir)
	res, err := pitr.Replay(ctx, pitr.Config{Store: src.store, Cluster: src.archive, Base: src.md, Target: *src.target,
		DataDir: m.cfg.DataDir, ScratchDir: filepath.Join(filepath.Dir(m.cfg.DataDir), pitrSegmentsDir), RunDir: runDir,
		Mysqld: cmd, MysqldArgs: m.restoreArgs(c), RootPassword: rootPassword, Accounts: accounts})
	if err != nil {
		return nil, fmt.Errorf("replaying the binlogs of cluster %s onto %s: %w", src.archive, src.backup, err)
	}
	m.deps.Log.Info("replayed archived binlogs", "target", src.target.String(), "segments", res.Segments,
		"bytes", res.Bytes, "transactions", res.Applied.Count(), "gtidExecuted", res.Executed.String())
	return &res, nil
}

// restoreArgs are the mysqld options of the verification server, from the instance's and the
// Cluster's parameters (restoreParameters only, any spelling; the Cluster's win, as in my.cnf).
func (m *manager) restoreArgs(c *v1alpha1.Cluster) []string {
	params := specs.CanonicalParameters(m.cfg.Parameters)
	maps.Copy(params, specs.CanonicalParameters(c.Spec.MySQL.Parameters))
	return specs.StartArgs(params, restoreParameters)
}

func (m *manager) recoveryStatus(src recoverySource) *v1alpha1.RecoveryStatus {
	now := metav1.NewTime(m.deps.Clock.Now())
	started, stopped := metav1.NewTime(src.md.StartedAt), metav1.NewTime(src.md.StoppedAt)
	rs := &v1alpha1.RecoveryStatus{Backup: src.backup, Path: src.path, GTIDExecuted: src.md.GTIDExecuted,
		BackupStartedAt: &started, BackupStoppedAt: &stopped, Instance: m.cfg.Instance, RecoveredAt: &now}
	if r := src.replayed; r != nil {
		rs.PointInTime = &v1alpha1.PointInTimeStatus{Target: src.target.String(), Segments: int32(r.Segments),
			Transactions: int64(r.Applied.Count()), GTIDExecuted: r.Executed.String()}
	}
	return rs
}

// describeRecovery names what a recovery restores, for messages.
func describeRecovery(rec *v1alpha1.BootstrapRecovery) string {
	if rec.Backup != nil && rec.RecoveryTarget != nil {
		return "Backup " + rec.Backup.Name + " and the archived binlogs of its cluster, to a recovery target"
	}
	if rec.Backup != nil {
		return "Backup " + rec.Backup.Name
	}
	if rec.Source != nil && rec.RecoveryTarget != nil {
		return fmt.Sprintf("a backup of cluster %s in bucket %s (path %q) and its archived binlogs, to a recovery target",
			rec.Source.ClusterName, rec.Source.ObjectStore.Bucket, rec.Source.ObjectStore.Path)
	}
	if rec.Source != nil {
		return fmt.Sprintf("the newest backup of cluster %s in bucket %s (path %q)",
			rec.Source.ClusterName, rec.Source.ObjectStore.Bucket, rec.Source.ObjectStore.Path)
	}
	return "an unnamed backup"
}

// reportRecovery sets the Recovered condition (and status.recovery when given) on the Cluster
// and records events, retrying conflicts until ctx ends. A report that cannot be written is
// logged: it never stops the restore or the instance.
func (m *manager) reportRecovery(ctx context.Context, status metav1.ConditionStatus, reason, msg string,
	rs *v1alpha1.RecoveryStatus, events ...kit.Event) {
	const maxMessage = 32 << 10
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	var c *v1alpha1.Cluster
	for attempt := 0; attempt < 10; attempt++ {
		var err error
		if c, err = m.readCluster(ctx); err != nil {
			return
		}
		old := c.DeepCopy()
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionRecovered,
			Status: status, Reason: reason, Message: msg, ObservedGeneration: c.Generation})
		if rs != nil {
			c.Status.Recovery = rs
		}
		if err = kit.PatchStatus(ctx, m.deps.Client, c, old); err == nil {
			break
		}
		m.deps.Log.Info("reporting the recovery failed; retrying", "error", err.Error())
		if m.sleep(ctx, bootstrapPoll) != nil {
			return
		}
	}
	if c != nil {
		for _, e := range events {
			m.recordEvent(ctx, c, e)
		}
	}
}

// recordEvent creates an Event on the Cluster as this instance.
func (m *manager) recordEvent(ctx context.Context, c *v1alpha1.Cluster, e kit.Event) {
	now := metav1.NewTime(m.deps.Clock.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: c.Name + ".", Namespace: c.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Cluster", APIVersion: v1alpha1.GroupVersion.String(),
			Namespace: c.Namespace, Name: c.Name, UID: c.UID, ResourceVersion: c.ResourceVersion},
		Reason: e.Kind.Reason, Message: e.Message, Type: e.Kind.Type,
		Source:         corev1.EventSource{Component: "instance-manager", Host: m.cfg.Instance},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if err := m.deps.Client.Create(ctx, ev); err != nil {
		m.deps.Log.Error(err, "recording an Event failed", "reason", e.Kind.Reason)
	}
}
