package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// A rolling update deletes an instance's Pod before it creates the new one; a spec the API server
// accepts for the Cluster but refuses for a Pod (a label it finds invalid, a PriorityClass that
// does not exist, a quota) would leave the instance without a Pod. Before any Pod of a rollout is
// deleted, the new Pod of each outdated instance is created in dry-run mode: the API server runs
// its validation and admission on it, and only the write is skipped. A Pod of that name exists, so
// a dry-run that passes them ends with AlreadyExists; any refusal holds the whole rollout, except a
// ResourceQuota's, which counts the new Pod beside the one it replaces.

// dryRunReplacements dry-runs the new Pod of every instance whose Pod runs an outdated spec and
// returns the API server's refusals, by instance. Nothing is sent while no Pod is outdated.
func (r *Reconciler) dryRunReplacements(ctx context.Context, o *Observation) (map[string]string, error) {
	c := o.Cluster
	active, _ := indexInstances(c, o.PVCs, o.Pods)
	var refused map[string]string
	for _, in := range active {
		if in.Pod == nil || in.Pod.DeletionTimestamp != nil || !specOutdated(c, *o, in) {
			continue
		}
		pod := newInstancePod(c, *o, in)
		err := r.Client.Create(ctx, pod, client.DryRunAll)
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
		case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota"):
			// A quota counts the new Pod beside the old one it replaces: the replacement itself
			// fits where the old one did.
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
			if refused == nil {
				refused = map[string]string{}
			}
			refused[in.Name] = err.Error()
		default:
			return nil, fmt.Errorf("checking the new Pod of %s (dry run): %w", in.Name, err)
		}
	}
	return refused, nil
}

// newInstancePod is the Pod an instance gets when its Pod is replaced, labelled as planScaleUp
// labels a new Pod.
func newInstancePod(c *v1.Cluster, o Observation, in observedInstance) *corev1.Pod {
	pod := specs.BuildPod(c, in.Serial, specs.PodOptions{OperatorImage: o.OperatorImage})
	setPodRole(c, pod)
	return pod
}

// refusedReplacements says which outdated instances' new Pods the API server refuses, for the
// Progressing condition; empty when none.
func refusedReplacements(o Observation) string {
	if len(o.RefusedReplacements) == 0 {
		return ""
	}
	names := make([]string, 0, len(o.RefusedReplacements))
	for name := range o.RefusedReplacements {
		names = append(names, name)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + ": " + o.RefusedReplacements[name]
	}
	return "no instance is replaced: the API server refuses the new spec's Pod of " + strings.Join(parts, "; ")
}
