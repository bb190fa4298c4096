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
	installed := mysql.SemiSyncStatus{SourcePluginInstalled: true, ReplicaPluginInstalled: true, Timeout: 10 * time.Second,
		WaitPoint: mysql.SourceWaitPoint, WaitNoReplica: true}
	never := mysql.SourceTimeoutNever
	primaryOn := installed
	primaryOn.SourceEnabled, primaryOn.WaitForReplicaCount, primaryOn.Timeout = true, 2, never
	primaryOldTimeout := primaryOn
	primaryOldTimeout.Timeout = 10 * time.Second
	primaryOtherWaitPoint := primaryOn
	primaryOtherWaitPoint.WaitPoint = "AFTER_COMMIT"
	primaryFellBack := primaryOn
	primaryFellBack.SourceEnabled = false
	replicaOn := installed
	replicaOn.ReplicaEnabled, replicaOn.Timeout = true, never
	replicaNotAcking := replicaOn
	replicaNotAcking.ReplicaEnabled = false
	for _, tc := range []struct {
		name     string
		spec     *v1alpha1.ClusterSpec
		primary  bool
		cur      mysql.SemiSyncStatus
		fellBack bool
		told     Participation
		want     mysql.SemiSyncSettings
		change   bool
	}{
		{"off and never installed: nothing to do", spec(false, ""), true, mysql.SemiSyncStatus{}, false, NotTold, mysql.SemiSyncSettings{}, false},
		{"a new primary under preferred starts at one", spec(true, v1alpha1.DataDurabilityPreferred), true, mysql.SemiSyncStatus{}, false, NotTold,
			mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 1, Timeout: never}, true},
		{"a new primary under required starts at minSyncReplicas, mysqld never timing a wait out", spec(true, v1alpha1.DataDurabilityRequired), true, installed, false, NotTold,
			mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 2, Timeout: never}, true},
		{"the operator's runtime count is kept", spec(true, v1alpha1.DataDurabilityPreferred), true, primaryOn, false, NotTold,
			mysql.SemiSyncSettings{SourceEnabled: true, Timeout: never}, false},
		{"a timeout other than the maximum is put back, leaving the count as it is, not as it was read", spec(true, v1alpha1.DataDurabilityPreferred), true, primaryOldTimeout, false, NotTold,
			mysql.SemiSyncSettings{SourceEnabled: true, Timeout: never}, true},
		{"a replica acknowledges", spec(true, ""), false, installed, false, NotTold,
			mysql.SemiSyncSettings{ReplicaEnabled: true, WaitForReplicaCount: 1, Timeout: never}, true},
		{"a demoted primary stops waiting and acknowledges", spec(true, v1alpha1.DataDurabilityRequired), false, primaryOn, false, NotTold,
			mysql.SemiSyncSettings{ReplicaEnabled: true, WaitForReplicaCount: 2, Timeout: never}, true},
		{"a replica the operator named a participant acknowledges", spec(true, ""), false, installed, false, Participant,
			mysql.SemiSyncSettings{ReplicaEnabled: true, WaitForReplicaCount: 1, Timeout: never}, true},
		{"a replica the operator left out of the participants does not acknowledge", spec(true, ""), false, replicaOn, false, NotParticipant,
			mysql.SemiSyncSettings{WaitForReplicaCount: 1, Timeout: never}, true},
		{"a non-participant that does not acknowledge is left alone", spec(true, ""), false, replicaNotAcking, false, NotParticipant,
			mysql.SemiSyncSettings{WaitForReplicaCount: 1, Timeout: never}, false},
		{"a replica not told yet acknowledges (the safe default)", spec(true, ""), false, replicaNotAcking, false, NotTold,
			mysql.SemiSyncSettings{ReplicaEnabled: true, WaitForReplicaCount: 1, Timeout: never}, true},
		{"the primary waits whatever it was told as a replica", spec(true, v1alpha1.DataDurabilityRequired), true, installed, false, NotParticipant,
			mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 2, Timeout: never}, true},
		{"a converged replica is left alone", spec(true, ""), false, replicaOn, false, NotTold,
			mysql.SemiSyncSettings{ReplicaEnabled: true, WaitForReplicaCount: 1, Timeout: never}, false},
		{"turned off: both sides off", spec(false, ""), false, replicaOn, false, NotTold,
			mysql.SemiSyncSettings{WaitForReplicaCount: 1, Timeout: never}, true},
		{"a wait point other than AFTER_SYNC is put back", spec(true, v1alpha1.DataDurabilityRequired), true, primaryOtherWaitPoint, false, NotTold,
			mysql.SemiSyncSettings{SourceEnabled: true, Timeout: never}, true},
		{"a primary that fell back keeps its source side off", spec(true, v1alpha1.DataDurabilityRequired), true, primaryFellBack, true, NotTold,
			mysql.SemiSyncSettings{WaitForReplicaCount: 2, Timeout: never}, false},
		{"a primary whose source side is off without a fallback turns it on", spec(true, v1alpha1.DataDurabilityRequired), true, primaryFellBack, false, NotTold,
			mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 2, Timeout: never}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, change := Desired(tc.spec, tc.primary, tc.cur, tc.fellBack, tc.told)
			if change != tc.change || (change && got != tc.want) {
				t.Errorf("got %+v, change %v; want %+v, %v", got, change, tc.want, tc.change)
			}
		})
	}
}
