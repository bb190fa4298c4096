package kit

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// JobCondition reports whether the Job has condition t with status True.
func JobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool { return trueCondition(j, t) != nil }

// JobFailedCondition is the Job's Failed condition when it is True (its reason says why: the
// deadline, the backoff limit), nil otherwise.
func JobFailedCondition(j *batchv1.Job) *batchv1.JobCondition {
	return trueCondition(j, batchv1.JobFailed)
}

func trueCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if c := &j.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// JobFinished reports whether the Job completed or failed.
func JobFinished(j *batchv1.Job) bool {
	return JobCondition(j, batchv1.JobComplete) || JobCondition(j, batchv1.JobFailed)
}

// PodMessage returns the termination message a container of one of the Job's Pods wrote, "" if
// none did. It reads from r (the API server: Pods are not cached).
func PodMessage(ctx context.Context, r client.Reader, job *batchv1.Job) (string, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(job.Namespace),
		client.MatchingLabels{batchv1.JobNameLabel: job.Name}); err != nil {
		return "", fmt.Errorf("listing the Pods of Job %s: %w", job.Name, err)
	}
	for _, p := range pods.Items {
		if !ownedBy(&p, job) {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.Message != "" {
				return t.Message, nil
			}
		}
	}
	return "", nil
}

func ownedBy(p *corev1.Pod, job *batchv1.Job) bool {
	for _, ref := range p.OwnerReferences {
		if ref.UID == job.UID {
			return true
		}
	}
	return false
}
