package semisync

import (
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

func TestDesiredSemiSync(t *testing.T) {
	spec := func(enabled bool, durability v1alpha1.DataDurability) *v1alpha1.ClusterSpec {
		return &v1alpha1.ClusterSpec{MinSyncReplicas: 2, MaxSyncReplicas: 2, MySQL: v1alpha1.MySQLConfiguration{
			SemiSync: &v1alpha1.SemiSyncConfiguration{Enabled: enabled, TimeoutMillis: 500, DataDurability: durability}}}
	}
	installed := mysql.SemiSyncStatus{SourcePluginInstalled: true, ReplicaPluginInstalled: true, Timeout: 10 * time.Second}
	primaryOn := installed
	primaryOn.SourceEnabled, primaryOn.WaitForReplicaCount, primaryOn.Timeout = true, 2, 500*time.Millisecond
	primaryOldTimeout := primaryOn
	primaryOldTimeout.Timeout = 10 * time.Second
	replicaOn := installed
	replicaOn.ReplicaEnabled, replicaOn.Timeout = true, 500*time.Millisecond
	for _, tc := range []struct {
		name    string
		spec    *v1alpha1.ClusterSpec
		primary bool
		cur     mysql.SemiSyncStatus
		want    mysql.SemiSyncSettings
		change  bool
	}{
		{"off and never installed: nothing to do", spec(false, ""), true, mysql.SemiSyncStatus{}, mysql.SemiSyncSettings{}, false},
		{"a new primary under preferred starts at one", spec(true, v1alpha1.DataDurabilityPreferred), true, mysql.SemiSyncStatus{},
			mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 1, Timeout: 500 * time.Millisecond}, true},
		{"a new primary under required starts at minSyncReplicas, its timeout raised to outlast a self-fence", spec(true, v1alpha1.DataDurabilityRequired), true, installed,
			mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 2, Timeout: RequiredMinTimeout}, true},
		{"the operator's runtime count is kept", spec(true, v1alpha1.DataDurabilityPreferred), true, primaryOn,
			mysql.SemiSyncSettings{SourceEnabled: true, Timeout: 500 * time.Millisecond}, false},
		{"a new timeout on a primary leaves the count as it is, not as it was read", spec(true, v1alpha1.DataDurabilityPreferred), true, primaryOldTimeout,
			mysql.SemiSyncSettings{SourceEnabled: true, Timeout: 500 * time.Millisecond}, true},
		{"a replica acknowledges", spec(true, ""), false, installed,
			mysql.SemiSyncSettings{ReplicaEnabled: true, WaitForReplicaCount: 1, Timeout: 500 * time.Millisecond}, true},
		{"a demoted primary stops waiting and acknowledges", spec(true, v1alpha1.DataDurabilityRequired), false, primaryOn,
			mysql.SemiSyncSettings{ReplicaEnabled: true, WaitForReplicaCount: 2, Timeout: RequiredMinTimeout}, true},
		{"a converged replica is left alone", spec(true, ""), false, replicaOn,
			mysql.SemiSyncSettings{ReplicaEnabled: true, WaitForReplicaCount: 1, Timeout: 500 * time.Millisecond}, false},
		{"turned off: both sides off", spec(false, ""), false, replicaOn,
			mysql.SemiSyncSettings{WaitForReplicaCount: 1, Timeout: 500 * time.Millisecond}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, change := Desired(tc.spec, tc.primary, tc.cur)
			if change != tc.change || (change && got != tc.want) {
				t.Errorf("got %+v, change %v; want %+v, %v", got, change, tc.want, tc.change)
			}
		})
	}
}
