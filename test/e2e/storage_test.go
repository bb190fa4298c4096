//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// The local node's host-path StorageClass cannot expand volumes (no expanding driver runs here):
// raising storage.size is refused with the class named, no PVC changes, the instance keeps
// running, and a Warning says what to do. The expansion itself is tested on the API server
// (test/clustercontroller, TestStorageGrowth), with the test writing the PVC status the resizer
// would.
func TestStorageGrowthRefusedByTheNodesStorageClass(t *testing.T) {
	ctx := context.Background()
	ns := Namespace(t)
	Apply(t, ns, `
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: db}
spec:
  instances: 1
  imageName: `+mysqlImage+`
  storage: {size: 1Gi}
`)
	cl := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	ConditionTrue(t, cl, "Ready", 5*time.Minute, func() []metav1.Condition { return cl.Status.Conditions })
	var pvc corev1.PersistentVolumeClaim
	if err := env.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-1"}, &pvc); err != nil {
		t.Fatal(err)
	}
	class := ""
	if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}

	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.c.Get(ctx, client.ObjectKeyFromObject(cl), cl); err != nil {
			return err
		}
		cl.Spec.Storage.Size = resource.MustParse("2Gi")
		return env.c.Update(ctx, cl)
	}); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 2*time.Minute, "StorageResized=False ExpansionNotSupported", func() (bool, error) {
		if err := env.c.Get(ctx, client.ObjectKeyFromObject(cl), cl); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(cl.Status.Conditions, mysqlv1.ConditionStorageResized)
		if c == nil {
			return false, fmt.Errorf("no StorageResized condition")
		}
		want := "StorageClass " + class + " of PVC db-1 does not allow volume expansion"
		if c.Status == metav1.ConditionFalse && c.Reason == "ExpansionNotSupported" && strings.Contains(c.Message, want) {
			t.Logf("condition: %s", c.Message)
			return true, nil
		}
		return false, fmt.Errorf("StorageResized %s %s: %s", c.Status, c.Reason, c.Message)
	})
	WarningEvent(t, ns, "db", "StorageNotResized", "", time.Minute)
	if err := env.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-1"}, &pvc); err != nil {
		t.Fatal(err)
	}
	if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("PVC db-1 asks for %s; a refused growth changes no PVC", got.String())
	}
	if err := env.c.Get(ctx, client.ObjectKeyFromObject(cl), cl); err != nil {
		t.Fatal(err)
	}
	if ready := meta.FindStatusCondition(cl.Status.Conditions, "Ready"); ready == nil || ready.Status != metav1.ConditionTrue {
		t.Errorf("the Cluster should stay Ready after a refused growth: %+v", ready)
	}
}
