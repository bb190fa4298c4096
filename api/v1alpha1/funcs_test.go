package v1alpha1

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBackupNameIsTheUTCSlot(t *testing.T) {
	sb := &ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Name: "daily"}}
	tokyo := time.FixedZone("JST", 9*3600)
	cases := []struct {
		slot time.Time
		want string
	}{
		{time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC), "daily-20261122020000"},
		{time.Date(2026, 11, 22, 11, 0, 0, 0, tokyo), "daily-20261122020000"},
		{time.Date(2026, 1, 2, 3, 4, 5, 999, time.UTC), "daily-20260102030405"},
	}
	for _, c := range cases {
		if got := sb.BackupName(c.slot); got != c.want {
			t.Errorf("BackupName(%v) = %q, want %q", c.slot, got, c.want)
		}
	}
	if n := len(sb.BackupName(time.Now())) - len(sb.Name); n != 15 {
		t.Errorf("the suffix is %d characters; the 48-character name limit assumes 15", n)
	}
}

func TestBackupIsDoneOnlyInFinalPhases(t *testing.T) {
	for phase, want := range map[BackupPhase]bool{
		"": false, BackupPhasePending: false, BackupPhaseRunning: false,
		BackupPhaseCompleted: true, BackupPhaseFailed: true,
	} {
		b := &Backup{Status: BackupStatus{Phase: phase}}
		if got := b.IsDone(); got != want {
			t.Errorf("IsDone() in phase %q = %v, want %v", phase, got, want)
		}
	}
}

func TestEffectiveDeletionPolicy(t *testing.T) {
	clusterWith := func(p DeletionPolicy) *Cluster {
		return &Cluster{Spec: ClusterSpec{Backup: &BackupConfiguration{DeletionPolicy: p}}}
	}
	cases := []struct {
		name    string
		backup  DeletionPolicy
		cluster *Cluster
		want    DeletionPolicy
	}{
		{"nothing set keeps", "", nil, DeletionPolicyKeep},
		{"cluster without backup section keeps", "", &Cluster{}, DeletionPolicyKeep},
		{"cluster default applies", "", clusterWith(DeletionPolicyDelete), DeletionPolicyDelete},
		{"backup overrides cluster", DeletionPolicyKeep, clusterWith(DeletionPolicyDelete), DeletionPolicyKeep},
		{"backup delete", DeletionPolicyDelete, nil, DeletionPolicyDelete},
	}
	for _, c := range cases {
		b := &Backup{Spec: BackupSpec{DeletionPolicy: c.backup}}
		if got := b.EffectiveDeletionPolicy(c.cluster); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestParseRetentionWindow(t *testing.T) {
	cases := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"1d", 24 * time.Hour, false},
		{"30d", 30 * 24 * time.Hour, false},
		{"2w", 14 * 24 * time.Hour, false},
		{"1m", 30 * 24 * time.Hour, false},
		{"12m", 360 * 24 * time.Hour, false},
		{"999m", 999 * 30 * 24 * time.Hour, false},
		{"0d", 0, true},
		{"01d", 0, true},
		{"-1d", 0, true},
		{"+1d", 0, true},
		{"1000d", 0, true},
		{"1y", 0, true},
		{"30", 0, true},
		{"d", 0, true},
		{"", 0, true},
		{"1 d", 0, true},
	}
	for _, c := range cases {
		got, err := ParseRetentionWindow(c.in)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("ParseRetentionWindow(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.wantErr)
		}
	}
}

// FuzzParseRetentionWindow checks that every accepted window matches the schema's pattern and is
// a positive whole number of days.
func FuzzParseRetentionWindow(f *testing.F) {
	for _, s := range []string{"1d", "30d", "4w", "12m", "0d", "1y", "", "99999d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseRetentionWindow(s)
		if err != nil {
			return
		}
		if !retentionPattern.MatchString(s) {
			t.Fatalf("accepted %q, which the CRD pattern rejects", s)
		}
		if d <= 0 || d%(24*time.Hour) != 0 {
			t.Fatalf("%q parsed to %v, not a positive whole number of days", s, d)
		}
	})
}

func TestResourceRequirementsContainerSharesNothing(t *testing.T) {
	r := ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
		Claims:   []corev1.ResourceClaim{{Name: "gpu"}},
	}
	c := r.Container()
	if !c.Limits.Memory().Equal(resource.MustParse("1Gi")) || !c.Requests.Cpu().Equal(resource.MustParse("500m")) ||
		len(c.Claims) != 1 || c.Claims[0].Name != "gpu" {
		t.Fatalf("Container() = %+v", c)
	}
	c.Limits[corev1.ResourceMemory] = resource.MustParse("2Gi")
	c.Claims[0].Name = "other"
	if !r.Limits.Memory().Equal(resource.MustParse("1Gi")) || r.Claims[0].Name != "gpu" {
		t.Errorf("changing the container's copy changed the spec: %+v", r)
	}
	if empty := (&ResourceRequirements{}).Container(); empty.Limits != nil || empty.Requests != nil || empty.Claims != nil {
		t.Errorf("an empty spec gives %+v, want nothing set", empty)
	}
}
