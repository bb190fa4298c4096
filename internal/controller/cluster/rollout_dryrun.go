package cluster

import (
	"context"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

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
// returns, by instance, why it may not be replaced now: the API server's refusal, or a dry run
// that could not be made (a webhook down, a timeout), which holds the rollout until it can. It
// never fails the reconcile: only the rollout waits. Nothing is sent while no Pod is outdated.
func (r *Reconciler) dryRunReplacements(ctx context.Context, o *Observation) map[string]string {
	c := o.Cluster
	active, _ := indexInstances(c, o.PVCs, o.Pods)
	var held map[string]string
	hold := func(name, why string) {
		if held == nil {
			held = map[string]string{}
		}
		held[name] = clipMessage(why)
	}
	for _, in := range active {
		if in.Pod == nil || in.Pod.DeletionTimestamp != nil || !specOutdated(c, *o, in) {
			continue
		}
		pod := newInstancePod(c, *o, in)
		err := r.Client.Create(ctx, pod, client.DryRunAll)
		switch {
		case err == nil, apierrors.IsAlreadyExists(err):
		case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota") && notLarger(pod, in.Pod):
			// A quota counts the new Pod beside the one it replaces: a replacement that asks
			// for no more than its predecessor fits where it did.
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) ||
			(apierrors.IsBadRequest(err) && !strings.Contains(err.Error(), "dry run")):
			hold(in.Name, err.Error())
		default:
			log.FromContext(ctx).Info("could not check the new Pod in a dry run", "instance", in.Name, "error", err.Error())
			hold(in.Name, "its new Pod could not be checked in a dry run: "+err.Error())
		}
	}
	return held
}

// notLarger says whether pod asks for no more of any resource, in requests and in limits, than
// old does, summed over its containers.
func notLarger(pod, old *corev1.Pod) bool {
	sum := func(p *corev1.Pod, limits bool) corev1.ResourceList {
		out := corev1.ResourceList{}
		for _, ctr := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
			l := ctr.Resources.Requests
			if limits {
				l = ctr.Resources.Limits
			}
			for k, v := range l {
				q := out[k]
				q.Add(v)
				out[k] = q
			}
		}
		return out
	}
	for _, limits := range []bool{false, true} {
		was := sum(old, limits)
		for k, v := range sum(pod, limits) {
			if w, ok := was[k]; !ok || v.Cmp(w) > 0 {
				return false
			}
		}
	}
	return true
}

// clipMessage keeps a message short enough for a condition that may list many instances.
func clipMessage(s string) string {
	const limit = 512
	if len(s) > limit {
		return s[:limit] + "…"
	}
	return s
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
	return clipMessage("no instance is replaced: the API server refuses the new spec's Pod of " + strings.Join(parts, "; "))
}
