package cluster

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// replicasUpdated: every Pod but the primary db-1 runs the Cluster's spec (after newImage), each
// Pod has a UID, and every instance reports: db-1 the writable primary at 1-10, db-2 at 1-9,
// db-3 at 1-10.
func (w *world) replicasUpdated() *world {
	for i := range w.o.Pods {
		p := &w.o.Pods[i]
		p.UID = types.UID("uid-" + p.Name)
		if p.Name != "db-1" {
			serial, _ := specs.InstanceSerial("db", p.Name)
			p.Annotations = specs.BuildPod(w.o.Cluster, serial, specs.PodOptions{OperatorImage: "op:1"}).Annotations
		}
	}
	return w.reports(map[string]*instanceclient.Status{
		"db-1": primaryReport(uuidA + ":1-10"),
		"db-2": replicaReport("db-1", uuidA+":1-9", uuidA+":1-9", true),
		"db-3": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
	}, nil)
}

func restartRecorded(instance, uid string, at time.Time) func(*v1.ClusterStatus) {
	return func(s *v1.ClusterStatus) {
		s.PrimaryRestart = &v1.PrimaryRestart{Instance: instance, PodUID: uid, RequestedAt: metav1.NewTime(at)}
	}
}

func TestDecideRollout(t *testing.T) {
	three := func() *world {
		return newWorld(3).primary("db-1", "db-1").instance(1, true).instance(2, true).instance(3, true)
	}
	updatedThree := func() *world { return three().newImage().labelled().replicasUpdated() }
	single := func() *world {
		w := newWorld(1).primary("db-1", "db-1").instance(1, true).newImage()
		w.o.Pods[0].UID = "uid-db-1"
		return w
	}
	for _, tc := range []struct {
		rule          string
		world         *world
		wantDelete    []string
		wantCondition string
		wantTarget    string // status.targetPrimary after the decision; "" means unchanged (db-1)
		wantRestart   string // status.primaryRestart's instance after it
	}{
		{"an unchanged spec replaces nothing", three(), nil, reasonConverged, "", ""},
		{"a new image replaces the highest serial replica first, one at a time", three().newImage(), []string{"db-3"}, reasonRollingUpdate, "", ""},
		{"nothing is replaced while an instance is not ready", newWorld(2).primary("db-1", "db-1").instance(1, true).
			instance(2, false).newImage(), nil, reasonInstancesNotReady, "", ""},
		{"nothing is replaced while a primary change is pending", three().newImage().primary("db-1", "db-2"), nil, reasonPrimaryPending, "db-2", ""},
		{"unsupervised: once the replicas run the new spec, switch over to the most advanced updated replica",
			updatedThree(), nil, reasonPrimaryUpdateSwitchover, "db-3", ""},
		{"unsupervised: a replica that cannot take over now is passed over (the switchover waits for the other to catch up)", func() *world {
			w := updatedThree()
			w.o.Reports["db-3"] = replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", false) // not receiving
			return w
		}(), nil, reasonPrimaryUpdateSwitchover, "db-2", ""},
		{"unsupervised: no switchover while no updated replica answers", func() *world {
			w := updatedThree()
			delete(w.o.Reports, "db-2")
			delete(w.o.Reports, "db-3")
			w.o.ReportErrors = map[string]string{"db-2": "timeout", "db-3": "timeout"}
			return w
		}(), nil, reasonPrimaryUpdatePending, "", ""},
		{"unsupervised: no new switchover within a minute of an aborted one", updatedThree().status(func(s *v1.ClusterStatus) {
			s.CurrentPrimaryTimestamp = &metav1.Time{Time: testNow.Add(-time.Hour)}
			s.TargetPrimaryTimestamp = &metav1.Time{Time: testNow.Add(-30 * time.Second)}
		}), nil, reasonPrimaryUpdatePending, "", ""},
		{"unsupervised: a minute after an aborted switchover, another", updatedThree().status(func(s *v1.ClusterStatus) {
			s.CurrentPrimaryTimestamp = &metav1.Time{Time: testNow.Add(-time.Hour)}
			s.TargetPrimaryTimestamp = &metav1.Time{Time: testNow.Add(-primaryUpdateRetryDelay)}
		}), nil, reasonPrimaryUpdateSwitchover, "db-3", ""},
		{"supervised: the primary waits for a person's promote", updatedThree().spec(func(s *v1.ClusterSpec) {
			s.PrimaryUpdateStrategy = v1.PrimaryUpdateSupervised
		}), nil, reasonPrimaryUpdateSupervised, "", ""},
		{"restart method: the restart is recorded first, the Pod kept", updatedThree().spec(func(s *v1.ClusterSpec) {
			s.PrimaryUpdateMethod = v1.PrimaryUpdateRestart
		}), nil, reasonPrimaryUpdateRestart, "", "db-1"},
		{"restart method: the recorded restart of this Pod deletes it", updatedThree().spec(func(s *v1.ClusterSpec) {
			s.PrimaryUpdateMethod = v1.PrimaryUpdateRestart
		}).status(restartRecorded("db-1", "uid-db-1", testNow.Add(-time.Second))), []string{"db-1"}, reasonRollingUpdate, "", "db-1"},
		{"restart method: a record older than the delete window is written anew, the Pod kept", updatedThree().spec(func(s *v1.ClusterSpec) {
			s.PrimaryUpdateMethod = v1.PrimaryUpdateRestart
		}).status(restartRecorded("db-1", "uid-db-1", testNow.Add(-plannedRestartDeleteWindow))), nil, reasonPrimaryUpdateRestart, "", "db-1"},
		{"restart method: a record of another Pod is written anew, the Pod kept", updatedThree().spec(func(s *v1.ClusterSpec) {
			s.PrimaryUpdateMethod = v1.PrimaryUpdateRestart
		}).status(restartRecorded("db-1", "uid-older", testNow.Add(-time.Second))), nil, reasonPrimaryUpdateRestart, "", "db-1"},
		{"no Pod is replaced while the API server refuses the new spec's Pod (a dry run)", func() *world {
			w := three().newImage()
			w.o.RefusedReplacements = map[string]string{"db-3": `pods "db-3" is forbidden: no PriorityClass with name x was found`}
			return w
		}(), nil, reasonRollingUpdate, "", ""},
		{"a Pod that refused to start mysqld is replaced once the spec changes, though not ready", func() *world {
			w := newWorld(2).primary("db-1", "db-1").instance(1, true).instance(2, false).newImage()
			w.o.Pods[1].Status.ContainerStatuses = []corev1.ContainerStatus{{Name: specs.MySQLContainerName,
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1,
					Message: "refusing to start mysqld: the data directory was last used by MySQL 9.8.0"}}}}
			return w
		}(), []string{"db-2"}, reasonRollingUpdate, "", ""},
		{"a Pod that refused to start mysqld on the current spec is left alone", func() *world {
			w := newWorld(2).primary("db-1", "db-1").instance(1, true).instance(2, false)
			w.o.Pods[1].Status.ContainerStatuses = []corev1.ContainerStatus{{Name: specs.MySQLContainerName,
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1,
					Message: "refusing to start mysqld: the data directory was last used by MySQL 9.8.0"}}}}
			return w
		}(), nil, reasonInstancesNotReady, "", ""},
		{"a single instance records its restart first", single(), nil, reasonPrimaryUpdateRestart, "", "db-1"},
		{"a single instance is restarted once recorded", single().status(restartRecorded("db-1", "uid-db-1", testNow.Add(-time.Second))),
			[]string{"db-1"}, reasonRollingUpdate, "", "db-1"},
	} {
		d := tc.world.decide()
		target := tc.wantTarget
		if target == "" {
			target = "db-1"
		}
		restart := ""
		if r := d.Status.PrimaryRestart; r != nil {
			restart = r.Instance
		}
		if !slices.Equal(d.DeletePods, tc.wantDelete) || condition(d, v1.ConditionProgressing).Reason != tc.wantCondition ||
			d.Status.TargetPrimary != target || restart != tc.wantRestart {
			t.Errorf("%s: delete %v, target %q, restart %q, Progressing %+v", tc.rule, d.DeletePods, d.Status.TargetPrimary, restart,
				condition(d, v1.ConditionProgressing))
		}
	}
}

// TestRolloutHandsAcknowledgementsOver: a replica that acknowledges commits is replaced only once
// another replica acknowledges in its place.
// semiSyncThree is a three-instance Cluster under required semi-sync (one acknowledger), db-1
// primary, acking the replica that acknowledges its commits.
func semiSyncThree(acking string) *world {
	w := newWorld(3).primary("db-1", "db-1").instance(1, true).instance(2, true).instance(3, true).labelled().
		spec(requiredSemiSync).spec(func(s *v1.ClusterSpec) { s.MinSyncReplicas, s.MaxSyncReplicas = 1, 1 })
	w.o.SemiSyncSettable = true
	rep := func(name string) *instanceclient.Status {
		st := replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true)
		st.SemiSyncReplica = &instanceclient.SemiSyncReplicaStatus{Enabled: name == acking, Active: name == acking}
		return st
	}
	p := primaryReport(uuidA + ":1-10")
	p.SemiSync = &instanceclient.SemiSyncStatus{Active: true, WaitForReplicaCount: 1, Clients: 1}
	return w.reports(map[string]*instanceclient.Status{"db-1": p, "db-2": rep("db-2"), "db-3": rep("db-3")}, nil)
}

// TestScaleDownHandsAcknowledgementsOver: a scale-down removes a replica that acknowledges commits
// only once another acknowledges in its place.
func TestScaleDownHandsAcknowledgementsOver(t *testing.T) {
	toTwo := func(s *v1.ClusterSpec) { s.Instances = 2 }
	d := semiSyncThree("db-3").spec(toTwo).decide()
	tells := namesOf(d.SemiSyncParticipants, func(t SemiSyncParticipantTell) string { return fmt.Sprintf("%s=%v", t.Instance, t.Participant) })
	if d.Detach != "" || !slices.Equal(tells, []string{"db-2=true", "db-3=false"}) || condition(d, v1.ConditionProgressing).Reason != reasonScaling {
		t.Errorf("db-3 acknowledges: detached %q, told %v, Progressing %+v; want nothing removed, db-2 told first",
			d.Detach, tells, condition(d, v1.ConditionProgressing))
	}
	if d := semiSyncThree("db-2").spec(toTwo).decide(); d.Detach != "db-3" {
		t.Errorf("db-2 acknowledges: detached %q, want db-3", d.Detach)
	}
}

func TestRolloutHandsAcknowledgementsOver(t *testing.T) {
	world := func(acking string) *world { return semiSyncThree(acking).newImage() }
	d := world("db-3").decide()
	tells := namesOf(d.SemiSyncParticipants, func(t SemiSyncParticipantTell) string { return fmt.Sprintf("%s=%v", t.Instance, t.Participant) })
	if len(d.DeletePods) != 0 || !slices.Equal(tells, []string{"db-2=true", "db-3=false"}) {
		t.Errorf("db-3 acknowledges: deleted %v, told %v; want nothing deleted, db-2 told to acknowledge before db-3 stops", d.DeletePods, tells)
	}
	d = world("db-2").decide()
	if !slices.Equal(d.DeletePods, []string{"db-3"}) || len(d.SemiSyncParticipants) != 0 {
		t.Errorf("db-2 acknowledges: deleted %v, told %v; want db-3 replaced, nobody told", d.DeletePods, d.SemiSyncParticipants)
	}
	broken := world("db-3")
	broken.o.Reports["db-2"].Replication.IORunning = false // db-2 cannot acknowledge
	if d := broken.decide(); len(d.DeletePods) != 0 || len(d.SemiSyncParticipants) != 0 {
		t.Errorf("db-2 not healthy: deleted %v, told %v; want db-3 kept acknowledging and not replaced", d.DeletePods, d.SemiSyncParticipants)
	}
	notYet := world("db-2")
	notYet.o.Reports["db-2"].SemiSyncReplica.Active = false // told, its semi-sync channel not up yet
	if d := notYet.decide(); len(d.DeletePods) != 0 {
		t.Errorf("db-2 enabled but not connected as a semi-sync replica: deleted %v, want nothing until it acknowledges", d.DeletePods)
	}
	repointing := world("db-2")
	repointing.o.Reports["db-2"].Replication.SourceInstance = "db-3" // still follows another source (after a switchover)
	if d := repointing.decide(); len(d.DeletePods) != 0 {
		t.Errorf("db-2 acknowledges another source: deleted %v, want nothing until it acknowledges the primary", d.DeletePods)
	}
}

// TestClearPrimaryRestart: a recorded restart of the primary is forgotten once it is over.
func TestClearPrimaryRestart(t *testing.T) {
	back := func() *world {
		w := newWorld(3).primary("db-1", "db-1").instance(1, true).instance(2, true).instance(3, true).labelled().replicasUpdated()
		w.o.Pods[0].UID = "uid-new"
		return w
	}
	for _, tc := range []struct {
		rule  string
		world *world
		keep  bool
	}{
		{"kept while the old Pod is still there", back().status(restartRecorded("db-1", "uid-new", testNow.Add(-time.Second))), true},
		{"kept while the new Pod is not ready", func() *world {
			w := back().status(restartRecorded("db-1", "uid-db-1", testNow.Add(-time.Second)))
			w.o.Pods[0].Status.Conditions = nil
			return w
		}(), true},
		{"kept while the new Pod's mysqld is not the writable primary", func() *world {
			w := back().status(restartRecorded("db-1", "uid-db-1", testNow.Add(-time.Second)))
			w.o.Reports["db-1"] = &instanceclient.Status{Role: v1.RolePrimary, ReadOnly: true, GTIDExecuted: uuidA + ":1-10"}
			return w
		}(), true},
		{"cleared once a new Pod is ready and its mysqld the writable primary", back().status(restartRecorded("db-1", "uid-db-1", testNow.Add(-time.Second))), false},
		{"cleared once another instance is the primary", back().primary("db-2", "db-2").status(restartRecorded("db-1", "uid-new", testNow.Add(-time.Second))), false},
		{"kept a while past the delete window: a deletion made at its end may not be in the cache yet",
			back().status(restartRecorded("db-1", "uid-new", testNow.Add(-plannedRestartDeleteWindow))), true},
		{"cleared when the recorded Pod was never deleted",
			back().status(restartRecorded("db-1", "uid-new", testNow.Add(-plannedRestartAbandonAfter))), false},
		{"cleared once the budget has passed", back().status(restartRecorded("db-1", "uid-new", testNow.Add(-3*time.Minute))), false},
	} {
		c := tc.world.o.Cluster.DeepCopy()
		active, _ := indexInstances(c, tc.world.o.PVCs, tc.world.o.Pods)
		clearPrimaryRestart(c, tc.world.o, active)
		if kept := c.Status.PrimaryRestart != nil; kept != tc.keep {
			t.Errorf("%s: kept %v, want %v", tc.rule, kept, tc.keep)
		}
	}
}
