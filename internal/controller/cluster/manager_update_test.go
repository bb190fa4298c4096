package cluster

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

const (
	oldManagerSum = "1111111111111111111111111111111111111111111111111111111111111111"
	newManagerSum = "2222222222222222222222222222222222222222222222222222222222222222"
)

// managers: a settled three-instance Cluster (db-1 primary) whose operator sends the binary
// newManagerSum, each instance reporting the binary of sums (by instance; "" reports none).
func managers(sums map[string]string) *world {
	w := newWorld(3).primary("db-1", "db-1").instance(1, true).instance(2, true).instance(3, true).labelled()
	for i := range w.o.Pods {
		w.o.Pods[i].UID = types.UID("uid-" + w.o.Pods[i].Name)
	}
	w.reports(map[string]*instanceclient.Status{
		"db-1": primaryReport(uuidA + ":1-10"),
		"db-2": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
		"db-3": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", true),
	}, nil)
	for name, sum := range sums {
		if sum != "" {
			w.o.Reports[name].Manager = &instanceclient.ManagerIdentity{Version: "v-" + sum[:1], SHA256: sum, InPlaceUpdate: true}
		}
	}
	w.o.ManagerBinary = &instances.ManagerBinary{Version: "v-2", SHA256: newManagerSum}
	return w
}

func allOld() map[string]string {
	return map[string]string{"db-1": oldManagerSum, "db-2": oldManagerSum, "db-3": oldManagerSum}
}

func TestPlanManagerUpdate(t *testing.T) {
	for _, tc := range []struct {
		rule          string
		world         *world
		wantUpdate    string
		wantDelete    []string
		wantCondition string
		wantTarget    string // status.targetPrimary after the decision; "" means unchanged (db-1)
	}{
		{"every instance on the operator's binary: nothing to do",
			managers(map[string]string{"db-1": newManagerSum, "db-2": newManagerSum, "db-3": newManagerSum}), "", nil, reasonConverged, ""},
		{"the highest serial replica is updated first, in place", managers(allOld()), "db-3", nil, reasonManagerUpdate, ""},
		{"then the next replica", managers(map[string]string{"db-1": oldManagerSum, "db-2": oldManagerSum, "db-3": newManagerSum}),
			"db-2", nil, reasonManagerUpdate, ""},
		{"the primary last, in place: no switchover",
			managers(map[string]string{"db-1": oldManagerSum, "db-2": newManagerSum, "db-3": newManagerSum}), "db-1", nil, reasonManagerUpdate, ""},
		{"no operator binary: instance managers are left as they are", func() *world {
			w := managers(allOld())
			w.o.ManagerBinary = nil
			return w
		}(), "", nil, reasonConverged, ""},
		{"an instance manager that reports no binary (it predates in-place updates) is left alone",
			managers(map[string]string{"db-1": newManagerSum, "db-2": newManagerSum, "db-3": ""}), "", nil, reasonConverged, ""},
		{"nothing while an instance does not answer", func() *world {
			w := managers(allOld())
			delete(w.o.Reports, "db-2")
			w.o.ReportErrors = map[string]string{"db-2": "timeout"}
			return w
		}(), "", nil, reasonManagerUpdate, ""},
		{"nothing while an instance is not ready", func() *world {
			w := managers(allOld())
			w.o.Pods[1].Status.Conditions = nil
			return w
		}(), "", nil, reasonInstancesNotReady, ""},
		{"nothing while the spec rolls out: the rolling update goes first", managers(allOld()).newImage(), "", []string{"db-3"}, reasonRollingUpdate, ""},
		{"nothing while a primary change is pending", managers(allOld()).primary("db-1", "db-2"), "", nil, "SwitchoverInProgress", "db-2"},
		{"an instance sent the binary is given time to run it, not sent it again", func() *world {
			w := managers(allOld())
			w.o.ManagerUpdatesSent = map[string]ManagerUpdateTry{"db-3": {At: testNow.Add(-10 * time.Second)}}
			return w
		}(), "", nil, reasonManagerUpdate, ""},
		{"an instance that did not run the binary sent 30 s ago is sent it again", func() *world {
			w := managers(allOld())
			w.o.ManagerUpdatesSent = map[string]ManagerUpdateTry{"db-3": {At: testNow.Add(-managerUpdateSettle)}}
			return w
		}(), "db-3", nil, reasonManagerUpdate, ""},
		{"an instance still hashing its binary is waited for: the next is not updated before it", func() *world {
			w := managers(map[string]string{"db-1": oldManagerSum, "db-2": oldManagerSum, "db-3": newManagerSum})
			w.o.Reports["db-3"].Manager.SHA256 = ""
			return w
		}(), "", nil, reasonManagerUpdate, ""},
		{"an instance that could not hash its binary is left alone: the others go on", func() *world {
			w := managers(allOld())
			w.o.Reports["db-3"].Manager.SHA256, w.o.Reports["db-3"].Manager.InPlaceUpdate = "", false
			return w
		}(), "db-2", nil, reasonManagerUpdate, ""},
		{"a failed sending waits its backoff", func() *world {
			w := managers(allOld())
			w.o.ManagerUpdatesSent = map[string]ManagerUpdateTry{"db-3": {At: testNow.Add(-20 * time.Second), Failed: true, Failures: 1}}
			return w
		}(), "", nil, reasonManagerUpdate, ""},
		{"after its backoff a failed sending is tried again", func() *world {
			w := managers(allOld())
			w.o.ManagerUpdatesSent = map[string]ManagerUpdateTry{"db-3": {At: testNow.Add(-managerUpdateBackoff(2)), Failed: true, Failures: 2}}
			return w
		}(), "db-3", nil, reasonManagerUpdate, ""},
		{"a replica that refused the binary three times has its Pod replaced", func() *world {
			w := managers(allOld())
			w.o.ManagerUpdatesSent = map[string]ManagerUpdateTry{"db-3": {At: testNow.Add(-time.Hour), Failed: true, Failures: 3, Refusals: 3}}
			return w
		}(), "", []string{"db-3"}, reasonRollingUpdate, ""},
		{"a replica that cannot be updated in place has its Pod replaced", func() *world {
			w := managers(allOld())
			w.o.Reports["db-3"].Manager.InPlaceUpdate, w.o.Reports["db-3"].Manager.NoInPlaceUpdate = false, "not the init process"
			return w
		}(), "", []string{"db-3"}, reasonRollingUpdate, ""},
		{"a primary that cannot be updated in place is switched over to an updated replica", func() *world {
			w := managers(map[string]string{"db-1": oldManagerSum, "db-2": newManagerSum, "db-3": newManagerSum})
			w.o.Reports["db-1"].Manager.InPlaceUpdate = false
			return w
		}(), "", nil, reasonPrimaryUpdateSwitchover, "db-2"},
	} {
		d := tc.world.decide()
		target := tc.wantTarget
		if target == "" {
			target = "db-1"
		}
		cond := condition(d, v1.ConditionProgressing)
		if d.UpdateManager != tc.wantUpdate || !slices.Equal(d.DeletePods, tc.wantDelete) ||
			cond.Reason != tc.wantCondition || d.Status.TargetPrimary != target {
			t.Errorf("%s: update %q, delete %v, target %q, Progressing %+v", tc.rule, d.UpdateManager, d.DeletePods,
				d.Status.TargetPrimary, cond)
		}
	}
}

func TestManagerUpdatedEvent(t *testing.T) {
	w := managers(map[string]string{"db-1": oldManagerSum, "db-2": oldManagerSum, "db-3": newManagerSum}).status(func(s *v1.ClusterStatus) {
		s.InstanceManagers = map[string]v1.InstanceManagerStatus{"db-1": {Version: "v-1", SHA256: oldManagerSum},
			"db-2": {Version: "v-1", SHA256: oldManagerSum}, "db-3": {Version: "v-1", SHA256: oldManagerSum}}
	})
	d := w.decide()
	var got []string
	for _, e := range d.Events[stepStatus] {
		if e.Kind.Reason == evManagerUpdated.Reason {
			got = append(got, e.Message)
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "Instance db-3 runs instance manager v-2") {
		t.Fatalf("InstanceManagerUpdated events %q, want one for db-3", got)
	}
	if m := d.Status.InstanceManagers["db-3"]; m.SHA256 != newManagerSum {
		t.Fatalf("status.instanceManagers[db-3] = %+v, want the new binary", m)
	}
}

func TestManagerUpdateBackoff(t *testing.T) {
	for failures, want := range map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 5: 5 * time.Minute, 20: 5 * time.Minute} {
		if got := managerUpdateBackoff(failures); got != want {
			t.Errorf("managerUpdateBackoff(%d) = %s, want %s", failures, got, want)
		}
	}
}
