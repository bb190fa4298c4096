package plugin_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
)

// TestOperatorSilence: when the status shows the operator not acting on a Cluster, one row per
// rule.
func TestOperatorSilence(t *testing.T) {
	created := testNow.Add(-time.Hour)
	cluster := func(gen, observed int64, writes ...metav1.ManagedFieldsEntry) *v1.Cluster {
		c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: gen, CreationTimestamp: metav1.NewTime(created), ManagedFields: writes}}
		c.Status.ObservedGeneration = observed
		return c
	}
	write := func(ago time.Duration, sub string) metav1.ManagedFieldsEntry {
		at := metav1.NewTime(testNow.Add(-ago))
		return metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, Time: &at, Subresource: sub}
	}
	for _, tc := range []struct {
		name    string
		cluster *v1.Cluster
		want    string // a part of the warning; "" for none
	}{
		{"a status of the current generation: no warning", cluster(3, 3), ""},
		{"no status past the grace after creation", cluster(1, 0), "it has not written the status of Cluster db, created 1h0m0s ago"},
		{"no status within the grace after creation", func() *v1.Cluster {
			c := cluster(1, 0)
			c.CreationTimestamp = metav1.NewTime(testNow.Add(-time.Minute))
			return c
		}(), ""},
		{"a status behind the spec written past the grace", cluster(2, 1, write(10*time.Minute, "")),
			"describes generation 1 of its spec, which is at generation 2 since 10m0s ago"},
		{"a status behind a spec written within the grace", cluster(2, 1, write(30*time.Second, "")), ""},
		{"a write of the status is no write of the spec", cluster(2, 1, write(10*time.Minute, ""), write(5*time.Second, "status")),
			"since 10m0s ago"},
		{"the warning says how to check the operator", cluster(1, 0), "kubectl get pods -A -l " + plugin.OperatorSelector},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := plugin.OperatorSilence(tc.cluster, testNow)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("OperatorSilence = %q, want %q", got, tc.want)
			}
		})
	}
}
