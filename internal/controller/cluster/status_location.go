package cluster

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/binlogarchive"
)

// reasonObjectStoreInUse is Degraded's reason while the Cluster's object store location belongs
// to another incarnation (status.objectStoreLocation).
const reasonObjectStoreInUse = "ObjectStoreInUse"

// locationDegradation names what keeps the Cluster's recovery points from being written: its
// location held by another incarnation, or the archiver refusing to archive (a fork, a location
// not held). Empty when nothing does.
func locationDegradation(st *v1.ClusterStatus, c *v1.Cluster) (reason, msg string) {
	if loc := st.ObjectStoreLocation; loc != nil && loc.Phase == v1.LocationInUse && loc.Location == c.ObjectStoreLocation() {
		return reasonObjectStoreInUse, "no backup or binlog archiving: " + loc.Location + ": " + loc.Message
	}
	cond := meta.FindStatusCondition(st.Conditions, binlogarchive.ConditionBinlogArchiving)
	if c.ObjectStoreLocation() == "" || cond == nil || cond.Status != metav1.ConditionFalse {
		return "", ""
	}
	switch cond.Reason {
	case binlogarchive.HealthFork, binlogarchive.HealthNotHeld:
		return cond.Reason, "binlog archiving refused, point-in-time recovery cannot reach past it: " + cond.Message
	}
	return "", ""
}
