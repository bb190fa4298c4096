package chaos

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// pollUntil calls check every half second until it reports done, returning an error naming the
// last reason it gave (or its last error) once timeout has passed.
func pollUntil(ctx context.Context, timeout time.Duration, check func() (done bool, why string, err error)) error {
	deadline := time.Now().Add(timeout)
	for {
		done, why, err := check()
		if err == nil && done {
			return nil
		}
		if err != nil {
			why = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s: %s", timeout, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// settledAt: the Cluster's status describes generation, Progressing is False and the Cluster is
// Ready (Ready); otherwise why not.
func settledAt(c *mysqlv1.Cluster, pods []corev1.Pod, generation int64) (bool, string) {
	p := meta.FindStatusCondition(c.Status.Conditions, "Progressing")
	if p == nil || p.ObservedGeneration < generation || p.Status != metav1.ConditionFalse {
		return false, fmt.Sprintf("Progressing %+v", p)
	}
	return Ready(c, pods)
}
