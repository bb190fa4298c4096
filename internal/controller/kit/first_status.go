package kit

import (
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// FirstStatusWait is how soon a controller that writes a Cluster's status looks again at a
// Cluster whose first status the Cluster controller has not written yet.
const FirstStatusWait = 2 * time.Second

// AwaitsFirstStatus reports whether the Cluster controller has not recorded a Cluster's first
// instance yet (status.latestGeneratedNode). It creates the first Pod and records it with the
// target primary in one status write, and decides that target only while no instance exists: a
// status write of another controller in between would make that write conflict and leave the
// Cluster without a target primary. Other controllers that write a Cluster's status wait for it.
func AwaitsFirstStatus(c *v1.Cluster) bool { return c.Status.LatestGeneratedNode == 0 }
