package plugin_test

import (
	"context"
	"strings"
	"testing"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// fenced sets the fencing annotation as a user (or an earlier fence verb) left it.
func fenced(value string) func(*v1.Cluster) {
	return func(c *v1.Cluster) {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[v1.FencedInstancesAnnotation] = value
	}
}

// TestFenceVerbs runs `fence on|off` against the real API server, one rule of fencing a row. The
// annotation after the verb is what the operator will mirror into status.fencedInstances.
func TestFenceVerbs(t *testing.T) {
	cases := []struct {
		rule       string
		existing   func(*v1.Cluster)
		otherPods  map[string]string // Pod name -> the Cluster it is labelled for
		args       []string
		wantErr    string
		wantOut    string
		annotation string // "" when the annotation must be absent
	}{
		{rule: "fencing a replica lists it in the annotation",
			args: []string{"fence", "on", "db", "db-2"}, wantOut: "db-2 fenced", annotation: `["db-2"]`},
		{rule: "fencing a second instance keeps the first",
			existing: fenced(`["db-3"]`),
			args:     []string{"fence", "on", "db", "db-2"}, wantOut: "db-2 fenced", annotation: `["db-2","db-3"]`},
		{rule: "fencing the primary says that writes stop",
			args: []string{"fence", "on", "db", "db-1"}, wantOut: "it is the primary: the Cluster accepts no writes", annotation: `["db-1"]`},
		{rule: "fencing a fenced instance says so and succeeds",
			existing: fenced(`["db-2"]`),
			args:     []string{"fence", "on", "db", "db-2"}, wantOut: "db-2 is already fenced", annotation: `["db-2"]`},
		{rule: "fencing every instance with a star",
			existing: fenced(`["db-2"]`),
			args:     []string{"fence", "on", "db", "*"}, wantOut: "every instance of db fenced", annotation: `["*"]`},
		{rule: "fencing one instance while all are fenced says so",
			existing: fenced(`["*"]`),
			args:     []string{"fence", "on", "db", "db-2"}, wantOut: "db-2 is already fenced", annotation: `["*"]`},
		{rule: "a name that is not <cluster>-<n> is refused",
			args: []string{"fence", "on", "db", "db2"}, wantErr: "db2 is not an instance of Cluster db: instance names are db-<n>"},
		{rule: "an instance number without a Pod is refused",
			args: []string{"fence", "on", "db", "db-7"}, wantErr: "db-7 is not an instance of Cluster db: there is no Pod db-7"},
		{rule: "a Pod of another Cluster is refused",
			otherPods: map[string]string{"db-9": "other"},
			args:      []string{"fence", "on", "db", "db-9"}, wantErr: "Pod db-9 is not labelled " + v1.ClusterLabel + "=db"},
		{rule: "a Cluster that does not exist is refused",
			args: []string{"fence", "on", "nosuch", "nosuch-1"}, wantErr: "cluster nosuch not found in namespace"},
		{rule: "a malformed annotation is refused with the way out",
			existing: fenced(`db-2`),
			args:     []string{"fence", "on", "db", "db-3"}, wantErr: "must be a JSON list of instance names", annotation: `db-2`},
		{rule: "unfencing removes only that instance",
			existing: fenced(`["db-2","db-3"]`),
			args:     []string{"fence", "off", "db", "db-2"}, wantOut: "db-2 unfenced", annotation: `["db-3"]`},
		{rule: "unfencing the last instance removes the annotation",
			existing: fenced(`["db-2"]`),
			args:     []string{"fence", "off", "db", "db-2"}, wantOut: "db-2 unfenced"},
		{rule: "unfencing an instance that is not fenced says so and succeeds",
			existing: fenced(`["db-3"]`),
			args:     []string{"fence", "off", "db", "db-2"}, wantOut: "db-2 is not fenced", annotation: `["db-3"]`},
		{rule: "unfencing a listed instance whose Pod is gone",
			existing: fenced(`["db-7"]`),
			args:     []string{"fence", "off", "db", "db-7"}, wantOut: "db-7 unfenced"},
		{rule: "unfencing an unlisted name that is no instance is refused",
			args: []string{"fence", "off", "db", "db-7"}, wantErr: "db-7 is not an instance of Cluster db"},
		{rule: "unfencing every instance with a star",
			existing: fenced(`["db-1","db-2"]`),
			args:     []string{"fence", "off", "db", "*"}, wantOut: "every instance of db unfenced"},
		{rule: "unfencing one instance while all are fenced is refused",
			existing: fenced(`["*"]`),
			args:     []string{"fence", "off", "db", "db-2"}, wantErr: "every instance is fenced", annotation: `["*"]`},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			w := newWorld(t)
			w.newCluster(t, 3, c.existing)
			for name, cluster := range c.otherPods {
				w.newPod(t, name, cluster)
			}
			out, err := w.run(c.args...)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("%v: error %v (output %q), want one containing %q", c.args, err, out, c.wantErr)
				}
			} else if err != nil || !strings.Contains(out, c.wantOut) {
				t.Fatalf("%v: output %q, error %v; want output containing %q", c.args, out, err, c.wantOut)
			}
			got, ok := w.get(t).Annotations[v1.FencedInstancesAnnotation]
			if got != c.annotation || ok != (c.annotation != "") {
				t.Errorf("annotation %s = %q (present %v), want %q", v1.FencedInstancesAnnotation, got, ok, c.annotation)
			}
		})
	}
}

// TestFenceSurvivesAStatusRewrite: the request is in metadata, so an operator rewriting the
// status (here, clearing status.fencedInstances) cannot lose it.
func TestFenceSurvivesAStatusRewrite(t *testing.T) {
	w := newWorld(t)
	w.newCluster(t, 3, nil)
	w.mustRun(t, "fence", "on", "db", "db-2")
	w.update(t, func(c *v1.Cluster) { c.Status.FencedInstances = nil; c.Status.ReadyInstances = 2 })
	if got := w.get(t).Annotations[v1.FencedInstancesAnnotation]; got != `["db-2"]` {
		t.Errorf("after a status rewrite the annotation is %q, want [\"db-2\"]", got)
	}
}

// TestFenceRetriesALostRace: another writer fences db-3 between the verb's read and its patch.
// The optimistic lock makes the patch fail with a conflict instead of dropping db-3, and the
// retry reads the Cluster again and keeps both.
func TestFenceRetriesALostRace(t *testing.T) {
	w := newWorld(t)
	w.newCluster(t, 3, nil)
	racing, patches, conflicts := w.racingClient(t, func() { w.mustRun(t, "fence", "on", "db", "db-3") })
	msg, err := plugin.SetFencing(context.Background(), racing, w.ns, "db", "db-2", true)
	check.Must(t, err)
	if msg != "db-2 fenced" || *patches != 2 || *conflicts != 1 {
		t.Errorf("message %q after %d patches and %d conflicts; want one conflict, then a patch that succeeds", msg, *patches, *conflicts)
	}
	if got := w.get(t).Annotations[v1.FencedInstancesAnnotation]; got != `["db-2","db-3"]` {
		t.Errorf("annotation %q, want both the racing writer's db-3 and db-2", got)
	}
}
