package ctrlworld

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FinishJobPod plays the kubelet: the Pod the Job controller created for job ends in phase, its
// container having written the termination message msg, and the Job controller turns that into
// the Job's condition. A Job deleted meanwhile counts as marked: a reconciler running in a manager
// may record and delete it before this sees the condition.
func (w *World) FinishJobPod(job, container string, phase corev1.PodPhase, msg string) {
	w.T.Helper()
	var pod corev1.Pod
	w.Eventually("the Job controller creates the Pod of "+job, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := w.Client.List(ctx, &pods, client.InNamespace(w.NS), client.MatchingLabels{batchv1.JobNameLabel: job}); err != nil {
			return false, err
		}
		if len(pods.Items) == 0 {
			return false, nil
		}
		pod = pods.Items[0]
		return true, nil
	})
	exit := int32(0)
	if phase == corev1.PodFailed {
		exit = 1
	}
	pod.Status.Phase = phase
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: container, State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Message: msg, Reason: "Completed"}}}}
	w.UpdateStatus(&pod)
	cond := batchv1.JobComplete
	if phase == corev1.PodFailed {
		cond = batchv1.JobFailed
	}
	w.Eventually("the Job controller marks "+job+" "+string(cond), func(ctx context.Context) (bool, error) {
		var j batchv1.Job
		if err := w.Client.Get(ctx, w.Key(job), &j); err != nil {
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		}
		for _, c := range j.Status.Conditions {
			if c.Type == cond && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}
