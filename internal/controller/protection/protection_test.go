package protection_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/protection"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/ctrlworld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
)

// TestBackupsHealthyLevels: on the real API server and a real bucket, a Cluster whose Backups fail
// gets BackupsHealthy=False LastBackupFailed with a Warning at the first failure; once no backup
// has succeeded for failureAlertAfter (1m here, the clock advanced) NoSuccessfulBackup, the
// critical level, with its own Warning and metric; a backup that completes (its archive and
// metadata.json really in the location) turns it True, with the location's figures listed.
func TestBackupsHealthyLevels(t *testing.T) {
	w := ctrlworld.New(t, shared, ctrlworld.ClockAt(time.Now().UTC().Truncate(time.Second)))
	store := w.StartStore("s3", "")
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: w.NS},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600,
			Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Backup: &v1.BackupConfiguration{ObjectStore: store.Config("s3", "prod", false),
				FailureAlertAfter: &metav1.Duration{Duration: time.Minute}}}}
	w.Create(c)
	c.Status.LatestGeneratedNode, c.Status.CurrentPrimary = 1, "db-1"
	w.UpdateStatus(c)
	w.ClaimLocation("db", nil)
	w.Events()

	r := &protection.Reconciler{Client: w.Client, APIReader: w.Client, Recorder: w.Recorder, Clock: w.Clock}
	look := func() (*v1.Cluster, *metav1.Condition, string) {
		t.Helper()
		_, err := r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key("db")})
		check.Must(t, err)
		got := ctrlworld.Get[v1.Cluster](w, "db")
		return got, meta.FindStatusCondition(got.Status.Conditions, v1.ConditionBackupsHealthy), strings.Join(w.Events(), "\n")
	}
	finish := func(name string, phase v1.BackupPhase, why string) {
		t.Helper()
		b := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS},
			Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "db"}}}
		w.Create(b)
		done := metav1.NewTime(w.Clock.Now())
		b.Status = v1.BackupStatus{Phase: phase, Error: why, CompletedAt: &done, Size: 13, GTIDExecuted: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"}
		w.UpdateStatus(b)
	}

	_, cond, _ := look()
	if cond == nil || cond.Status != metav1.ConditionUnknown || cond.Reason != protection.ReasonNoBackupYet {
		t.Fatalf("before any Backup: %+v", cond)
	}
	finish("f1", v1.BackupPhaseFailed, "uploading: 503 Service Unavailable")
	got, cond, ev := look()
	if cond.Status != metav1.ConditionFalse || cond.Reason != protection.ReasonFailed || !strings.Contains(cond.Message, "503") ||
		!strings.Contains(ev, "Warning LastBackupFailed") || got.Status.Backups.LastFailed.Name != "f1" {
		t.Fatalf("after a failure: %+v, events %q", cond, ev)
	}
	if v := gauge(t, "cnm_backups_healthy", w.NS); v != 0 {
		t.Errorf("cnm_backups_healthy %v, want 0", v)
	}

	w.Clock.Step(2 * time.Minute)
	finish("f2", v1.BackupPhaseFailed, "uploading: 503 Service Unavailable")
	_, cond, ev = look()
	if cond.Reason != protection.ReasonNoSuccess || !strings.Contains(cond.Message, "critical") || !strings.Contains(ev, "Warning NoSuccessfulBackup") {
		t.Fatalf("past failureAlertAfter: %+v, events %q", cond, ev)
	}
	if v := gauge(t, "cnm_backups_no_success_critical", w.NS); v != 1 {
		t.Errorf("cnm_backups_no_success_critical %v, want 1", v)
	}

	direct, err := store.Direct("prod")
	check.Must(t, err)
	data := []byte("a real archive")
	sum := sha256.Sum256(data)
	_, err = direct.UploadBackup(w.Ctx, objectstore.UploadRequest{Backup: objectstore.BackupRef{Cluster: "db", Name: "ok", ID: "1"},
		Namespace: w.NS, ClusterUID: string(c.UID), Method: "clone", Format: objectstore.FormatTar, Compression: objectstore.CompressionZstd,
		Archive: bytes.NewReader(data), Finish: func() (objectstore.ProducerResult, error) {
			return objectstore.ProducerResult{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), GTIDExecuted: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9",
				ServerVersion: "9.7.4", StartedAt: w.Clock.Now(), StoppedAt: w.Clock.Now()}, nil
		}})
	check.Must(t, err)
	w.Clock.Step(time.Second)
	finish("ok", v1.BackupPhaseCompleted, "")
	got, cond, ev = look()
	st := got.Status.Backups
	if cond.Status != metav1.ConditionTrue || !strings.Contains(ev, "Normal BackupsHealthy") || st.LastSuccessful.Name != "ok" ||
		st.Restorable != 1 || st.RestorableBytes < int64(len(data)) || st.CriticalAt == nil {
		t.Fatalf("healed: %+v, status %+v, events %q", cond, st, ev)
	}
	if v := gauge(t, "cnm_backups_restorable", w.NS); v != 1 {
		t.Errorf("cnm_backups_restorable %v, want 1", v)
	}

	// finishedBackupTTL: the finished Backup objects older than it go, the newest completed stays.
	got = ctrlworld.Get[v1.Cluster](w, "db")
	old := got.DeepCopy()
	got.Spec.Backup.FinishedBackupTTL = &metav1.Duration{Duration: time.Minute}
	check.Must(t, w.Client.Patch(w.Ctx, got, client.MergeFrom(old)))
	w.Clock.Step(5 * time.Minute)
	_, _, ev = look()
	for _, name := range []string{"f1", "f2"} {
		if err := w.Client.Get(w.Ctx, w.Key(name), &v1.Backup{}); !apierrors.IsNotFound(err) {
			t.Errorf("Backup %s past finishedBackupTTL: %v, want deleted", name, err)
		}
	}
	check.Must(t, w.Client.Get(w.Ctx, w.Key("ok"), &v1.Backup{}))
	if !strings.Contains(ev, "Normal BackupObjectsPruned Deleted 2 Backup object(s)") {
		t.Errorf("events %q", ev)
	}
}

// gauge finds the series of name for the namespace's Cluster db in the operator's registry.
func gauge(t *testing.T, name, ns string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	check.Must(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var nsOK, clusterOK bool
			for _, l := range m.GetLabel() {
				nsOK = nsOK || (l.GetName() == "namespace" && l.GetValue() == ns)
				clusterOK = clusterOK || (l.GetName() == "cluster" && l.GetValue() == "db")
			}
			if nsOK && clusterOK {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no series %s for %s/db", name, ns)
	return 0
}

// TestListingRetriedAfterAFailure: a location that cannot be listed (the store answering 503) is
// listed again a minute later, and at once when a Backup finishes: a backup that completes once
// the store is back shows in status.backups without waiting for the 5-minute refresh.
func TestListingRetriedAfterAFailure(t *testing.T) {
	w := ctrlworld.New(t, shared, ctrlworld.ClockAt(time.Now().UTC().Truncate(time.Second)))
	store := w.StartStore("s3", "")
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: w.NS},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600,
			Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Backup:  &v1.BackupConfiguration{ObjectStore: store.Config("s3", "prod", true)}}}
	w.Create(c)
	c.Status.LatestGeneratedNode = 1
	w.UpdateStatus(c)
	open := func(cfg objectstore.Config) (*objectstore.Client, error) {
		cfg.MaxRetries = 1
		return objectstore.New(cfg)
	}
	w.ClaimLocation("db", open)

	r := &protection.Reconciler{Client: w.Client, APIReader: w.Client, Recorder: w.Recorder, Clock: w.Clock, OpenStore: open}
	store.Proxy.Inject(s3proxy.Fault{Match: s3proxy.All(), Action: s3proxy.Status(http.StatusServiceUnavailable)})
	res, err := r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key("db")})
	check.Must(t, err)
	if st := ctrlworld.Get[v1.Cluster](w, "db").Status.Backups; st == nil || st.ListedAt != nil || res.RequeueAfter > time.Minute {
		t.Fatalf("the store failing: status %+v, requeue %s; want nothing listed, retried within a minute", st, res.RequeueAfter)
	}
	store.Proxy.ClearFaults()
	direct, err := store.Direct("prod")
	check.Must(t, err)
	data := []byte("archive")
	sum := sha256.Sum256(data)
	_, err = direct.UploadBackup(w.Ctx, objectstore.UploadRequest{Backup: objectstore.BackupRef{Cluster: "db", Name: "b1", ID: "1"},
		Namespace: w.NS, Method: "clone", Format: objectstore.FormatTar, Compression: objectstore.CompressionZstd,
		Archive: bytes.NewReader(data), Finish: func() (objectstore.ProducerResult, error) {
			return objectstore.ProducerResult{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), GTIDExecuted: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1",
				ServerVersion: "9.7.4", StartedAt: w.Clock.Now(), StoppedAt: w.Clock.Now()}, nil
		}})
	check.Must(t, err)
	w.Clock.Step(5 * time.Second) // well within the minute of the failed listing
	b := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "b1", Namespace: w.NS}, Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "db"}}}
	w.Create(b)
	done := metav1.NewTime(w.Clock.Now())
	b.Status = v1.BackupStatus{Phase: v1.BackupPhaseCompleted, CompletedAt: &done}
	w.UpdateStatus(b)
	_, err = r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key("db")})
	check.Must(t, err)
	if st := ctrlworld.Get[v1.Cluster](w, "db").Status.Backups; st.Restorable != 1 || st.ListedAt == nil {
		t.Errorf("a Backup completed after the failed listing: %+v, want the location listed again (1 backup)", st)
	}
}
