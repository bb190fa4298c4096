package semisync

import (
	"slices"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

func semiSyncSpec(enabled bool, durability v1alpha1.DataDurability, minSync, maxSync int32) *v1alpha1.ClusterSpec {
	return &v1alpha1.ClusterSpec{
		Instances: 4, MinSyncReplicas: minSync, MaxSyncReplicas: maxSync,
		MySQL: v1alpha1.MySQLConfiguration{SemiSync: &v1alpha1.SemiSyncConfiguration{
			Enabled: enabled, TimeoutMillis: 1500, DataDurability: durability,
		}},
	}
}

func replicas(healthy ...bool) []ReplicaHealth {
	names := []string{"c-2", "c-3", "c-4"}
	out := make([]ReplicaHealth, len(healthy))
	for i, h := range healthy {
		out[i] = ReplicaHealth{Name: names[i], Healthy: h}
	}
	return out
}

func TestPlanSemiSync(t *testing.T) {
	const (
		pref = v1alpha1.DataDurabilityPreferred
		req  = v1alpha1.DataDurabilityRequired
	)
	for _, tc := range []struct {
		name         string
		spec         *v1alpha1.ClusterSpec
		replicas     []ReplicaHealth
		enabled      bool
		count        int
		participants []string
		lowered      bool
		short        bool
	}{
		{"semi-sync off: nothing waits", semiSyncSpec(false, pref, 0, 0), replicas(true, true),
			false, 1, nil, false, false},
		{"no semi-sync section: off", &v1alpha1.ClusterSpec{Instances: 3}, replicas(true, true),
			false, 1, nil, false, false},
		{"preferred, all healthy: minSyncReplicas", semiSyncSpec(true, pref, 2, 2), replicas(true, true, true),
			true, 2, []string{"c-2", "c-3"}, false, false},
		{"preferred lowers the count to the healthy replicas", semiSyncSpec(true, pref, 2, 2), replicas(true, false),
			true, 1, []string{"c-2", "c-3"}, true, false},
		{"preferred never goes below one", semiSyncSpec(true, pref, 2, 2), replicas(false, false),
			true, 1, []string{"c-2", "c-3"}, true, true},
		{"preferred raises the count back as replicas recover", semiSyncSpec(true, pref, 2, 3), replicas(true, true, false),
			true, 2, []string{"c-2", "c-3", "c-4"}, false, false},
		{"preferred is the default when unset", semiSyncSpec(true, "", 2, 2), replicas(false, true),
			true, 1, []string{"c-2", "c-3"}, true, false},
		{"required pins minSyncReplicas", semiSyncSpec(true, req, 2, 2), replicas(true, false),
			true, 2, []string{"c-2", "c-3"}, false, true},
		{"required with every replica down", semiSyncSpec(true, req, 1, 1), replicas(false, false),
			true, 1, []string{"c-2"}, false, true},
		{"minSyncReplicas and maxSyncReplicas at their default 0: one acknowledgement, one participant", semiSyncSpec(true, pref, 0, 0), replicas(true, true, true),
			true, 1, []string{"c-2"}, false, false},
		{"maxSyncReplicas bounds the participants, healthy first", semiSyncSpec(true, pref, 1, 1), replicas(false, true, true),
			true, 1, []string{"c-3"}, false, false},
		{"a healthy replica replaces a failed participant", semiSyncSpec(true, req, 1, 2), replicas(false, true, true),
			true, 1, []string{"c-3", "c-4"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PlanFor(tc.spec, tc.replicas)
			if p.Enabled != tc.enabled || p.WaitForReplicaCount != tc.count || p.Lowered != tc.lowered || p.Short != tc.short {
				t.Errorf("plan = %+v; want enabled %v, count %d, lowered %v, short %v",
					p, tc.enabled, tc.count, tc.lowered, tc.short)
			}
			if !slices.Equal(p.Participants, tc.participants) {
				t.Errorf("participants = %v, want %v", p.Participants, tc.participants)
			}
			want := 1500 * time.Millisecond
			if ss := tc.spec.MySQL.SemiSync; ss != nil && ss.Enabled && ss.DataDurability == req {
				want = RequiredMinFallback
			}
			if tc.spec.MySQL.SemiSync != nil && p.FallbackAfter != want {
				t.Errorf("fallback after %s, want %s", p.FallbackAfter, want)
			}
			reversed := slices.Clone(tc.replicas)
			slices.Reverse(reversed)
			if again := PlanFor(tc.spec, reversed); !slices.Equal(again.Participants, p.Participants) {
				t.Errorf("participants depend on input order: %v vs %v", again.Participants, p.Participants)
			}
		})
	}
}

func TestSemiSyncSettingsFor(t *testing.T) {
	p := PlanFor(semiSyncSpec(true, v1alpha1.DataDurabilityPreferred, 1, 1), replicas(true, true))
	for _, tc := range []struct {
		name     string
		instance string
		primary  bool
		want     mysql.SemiSyncSettings
	}{
		{"the primary waits", "c-1", true, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 1, Timeout: mysql.SourceTimeoutNever}},
		{"a participant acknowledges", "c-2", false, mysql.SemiSyncSettings{ReplicaEnabled: true, WaitForReplicaCount: 1, Timeout: mysql.SourceTimeoutNever}},
		{"a replica beyond maxSyncReplicas does not", "c-3", false, mysql.SemiSyncSettings{WaitForReplicaCount: 1, Timeout: mysql.SourceTimeoutNever}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.SettingsFor(tc.instance, tc.primary); got != tc.want {
				t.Errorf("SettingsFor = %+v, want %+v", got, tc.want)
			}
		})
	}
	off := PlanFor(semiSyncSpec(false, "", 0, 0), nil)
	if got := off.SettingsFor("c-1", true); got.SourceEnabled || got.ReplicaEnabled || got.WaitForReplicaCount < 1 {
		t.Errorf("semi-sync off: %+v", got)
	}
}

// TestMysqldNeverTimesOut: whatever timeoutMillis and dataDurability say, mysqld's own timeout
// is the maximum (it never releases a waiting commit by itself), and timeoutMillis is when the
// instance manager may fall back (Plan.FallbackAfter), under both durabilities.
func TestMysqldNeverTimesOut(t *testing.T) {
	for _, tc := range []struct {
		rule    string
		millis  int64
		durable v1alpha1.DataDurability
		want    time.Duration
	}{
		{"required: a timeoutMillis shorter than the Lease TTL is raised to it (a cut-off primary self-fences first)", 1000, v1alpha1.DataDurabilityRequired, RequiredMinFallback},
		{"required: the default timeoutMillis is raised to the Lease TTL", 0, v1alpha1.DataDurabilityRequired, RequiredMinFallback},
		{"required keeps a long timeoutMillis", 600000, v1alpha1.DataDurabilityRequired, 10 * time.Minute},
		{"preferred falls back after timeoutMillis", 1000, v1alpha1.DataDurabilityPreferred, time.Second},
		{"an unset timeoutMillis is 10 s", 0, v1alpha1.DataDurabilityPreferred, 10 * time.Second},
	} {
		spec := semiSyncSpec(true, tc.durable, 1, 1)
		spec.MySQL.SemiSync.TimeoutMillis = tc.millis
		p := PlanFor(spec, replicas(true, true))
		if p.FallbackAfter != tc.want {
			t.Errorf("%s: fallback after %s, want %s", tc.rule, p.FallbackAfter, tc.want)
		}
		for _, primary := range []bool{true, false} {
			if got := p.SettingsFor("c-2", primary).Timeout; got != mysql.SourceTimeoutNever {
				t.Errorf("%s: mysqld timeout %s (primary %v), want %s", tc.rule, got, primary, mysql.SourceTimeoutNever)
			}
		}
	}
}

// TestParticipantsByReadiness: one row per rule of the order in which maxSyncReplicas
// participants are chosen (here one of three replicas).
func TestParticipantsByReadiness(t *testing.T) {
	const want = "c-3"
	healthy := ReplicaHealth{Healthy: true, Answers: true, FollowsPrimary: true}
	for _, tc := range []struct {
		rule   string
		chosen ReplicaHealth
		others []ReplicaHealth
	}{
		{"a healthy replica goes before one that follows the primary but does not run yet",
			healthy, []ReplicaHealth{{Answers: true, FollowsPrimary: true, Acknowledging: true}}},
		{"among healthy replicas the acknowledging one is kept",
			ReplicaHealth{Healthy: true, Answers: true, FollowsPrimary: true, Acknowledging: true}, []ReplicaHealth{healthy, healthy}},
		{"a replica that follows the primary goes before one that acknowledges an old source",
			ReplicaHealth{Answers: true, FollowsPrimary: true}, []ReplicaHealth{{Answers: true, Acknowledging: true}}},
		{"the acknowledger is kept while no replica follows the new primary",
			ReplicaHealth{Answers: true, Acknowledging: true}, []ReplicaHealth{{Answers: true}, {}}},
		{"a replica that answers goes before one that does not (the old primary being recreated)",
			ReplicaHealth{Answers: true}, []ReplicaHealth{{}, {Acknowledging: true}}},
		{"a healthy replica goes before a healthy, acknowledging one a rolling update is about to replace",
			healthy, []ReplicaHealth{{Healthy: true, Answers: true, FollowsPrimary: true, Acknowledging: true, Leaving: true}}},
		{"a healthy leaving replica keeps acknowledging rather than hand over to one not healthy yet",
			ReplicaHealth{Healthy: true, Answers: true, FollowsPrimary: true, Acknowledging: true, Leaving: true},
			[]ReplicaHealth{{Answers: true, FollowsPrimary: true}, {Answers: true}}},
		{"a leaving replica that answers goes before one that does not",
			ReplicaHealth{Answers: true, Leaving: true}, []ReplicaHealth{{}, {Acknowledging: true}}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			in := []ReplicaHealth{tc.chosen}
			in[0].Name = want
			for i, o := range tc.others {
				o.Name = []string{"c-1", "c-2"}[i] // earlier names: name order alone would pick them
				in = append(in, o)
			}
			for range 2 {
				if got := participants(in, 1); !slices.Equal(got, []string{want}) {
					t.Errorf("participants = %v, want [%s]", got, want)
				}
				slices.Reverse(in)
			}
		})
	}
	t.Run("equal replicas go by name", func(t *testing.T) {
		in := []ReplicaHealth{{Name: "c-3", Answers: true}, {Name: "c-2", Answers: true}}
		if got := participants(in, 1); !slices.Equal(got, []string{"c-2"}) {
			t.Errorf("participants = %v, want [c-2]", got)
		}
	})
}
