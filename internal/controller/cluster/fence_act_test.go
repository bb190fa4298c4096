package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/cluster"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// fencer answers FenceMySQL with err, on top of the package's fake instance source.
type fencer struct {
	*fakeInstances
	err error
}

func (f *fencer) FenceMySQL(context.Context, *v1.Cluster, corev1.Pod) (mysql.FenceResult, error) {
	return mysql.FenceResult{}, f.err
}

// TestFailoverActOnFenceOutcome: what the failover act does with the old primary's Pod after the
// fence of its mysqld, one rule a row, on the real API server.
func TestFailoverActOnFenceOutcome(t *testing.T) {
	for _, tc := range []struct {
		rule       string
		fenceErr   error
		wantErr    error // nil: the act succeeds
		wantDelete bool
	}{
		{"fenced: the Pod is deleted", nil, nil, true},
		{"unreachable: passed over, the Pod is deleted", fmt.Errorf("%w: timeout", mysql.ErrUnreachable), nil, true},
		{"refused (the server runs but will not let the fence account in): the Pod is still deleted, and the act fails so no target is named",
			fmt.Errorf("%w: Error 1045", mysql.ErrFenceRefused), mysql.ErrFenceRefused, true},
		{"any other failure: the act fails and the Pod is kept, the fence is tried again",
			errors.New("super_read_only: lock wait timeout"), nil, false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			w := newClusterWorld(t, nil)
			w.rec.Instances = &fencer{fakeInstances: w.instances, err: tc.fenceErr}
			var c v1.Cluster
			w.Get("db", &c)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-1", Namespace: w.NS,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(&c, v1.GroupVersion.WithKind("Cluster"))}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mysql", Image: "mysql:test"}}}}
			w.Create(pod)
			_, err := w.rec.ActFailover(w.Ctx, &c, cluster.FailoverWork{Fence: pod, DeletePod: "db-1", QuickDelete: true})
			switch {
			case tc.fenceErr == nil || errors.Is(tc.fenceErr, mysql.ErrUnreachable):
				if err != nil {
					t.Fatalf("act: %v", err)
				}
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("act error %v, want %v", err, tc.wantErr)
			case err == nil:
				t.Fatal("the act succeeded after a failed fence: the next step (naming a target) would follow")
			}
			var got corev1.Pod
			gerr := w.Client.Get(w.Ctx, w.Key("db-1"), &got)
			deleted := apierrors.IsNotFound(gerr) || (gerr == nil && got.DeletionTimestamp != nil)
			if deleted != tc.wantDelete {
				t.Errorf("Pod deleted %v, want %v (get: %v)", deleted, tc.wantDelete, gerr)
			}
		})
	}
}
