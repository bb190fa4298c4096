package instance

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestPeerWatch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answer   map[string]bool
		isolated bool
	}{
		{"a peer answers: not isolated", map[string]bool{"db-3": true}, false},
		{"no peer answers: still isolated", map[string]bool{}, true},
		{"only the instance itself answers: still isolated", map[string]bool{"db-1": true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			d := NewIsolationDetector(clk, time.Second)
			d.Arm()
			clk.Step(time.Minute)
			var asked []string
			w := &PeerWatch{Self: "db-1", Isolation: d, Interval: time.Second, Clock: clk,
				Members: func() []string { return []string{"db-1", "db-2", "db-3"} },
				Reach: func(_ context.Context, name string) error {
					asked = append(asked, name)
					if tc.answer[name] {
						return nil
					}
					return errors.New("no answer")
				}}
			ctx, cancel := context.WithCancel(t.Context())
			cancel() // one round, then Run returns
			w.Run(ctx)
			if got := d.Isolated(); got != tc.isolated {
				t.Errorf("Isolated = %v, want %v (asked %v)", got, tc.isolated, asked)
			}
			if slices.Contains(asked, "db-1") {
				t.Error("the instance asked itself")
			}
		})
	}
}

func TestClusterMembers(t *testing.T) {
	c := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: v1alpha1.ClusterSpec{Instances: 2},
		Status: v1alpha1.ClusterStatus{LatestGeneratedNode: 3}}
	if got, want := ClusterMembers(c, []string{"db-9"}), []string{"db-1", "db-2", "db-3", "db-9"}; !slices.Equal(got, want) {
		t.Errorf("ClusterMembers = %v, want %v", got, want)
	}
}
