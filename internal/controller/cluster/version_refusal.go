package cluster

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// reasonServerVersionRefused is the Degraded reason of an instance whose manager refused to start
// mysqld on its data directory: the image runs an older MySQL than the one that last ran there,
// a downgrade MySQL does not support (internal/mysql.DecideVersionChange). The container exits and
// the kubelet restarts it with a back-off; the rolling update that brought the image waits on
// that instance, so the other instances keep their Pods and their version.
const reasonServerVersionRefused = "ServerVersionRefused"

// versionRefusals are the instances whose mysql container last ended refusing to start mysqld,
// each with the manager's message (the container's termination message).
func versionRefusals(active []observedInstance) []string {
	var out []string
	for _, in := range active {
		if in.Pod == nil || in.Pod.DeletionTimestamp != nil {
			continue
		}
		if msg := refusedStart(in.Pod); msg != "" {
			out = append(out, in.Name+": "+msg)
		}
	}
	return out
}

// refusedStart is the refusal the Pod's mysql container reported when it last ended, empty when
// it did not end that way.
func refusedStart(pod *corev1.Pod) string {
	i := slices.IndexFunc(pod.Status.ContainerStatuses, func(s corev1.ContainerStatus) bool {
		return s.Name == specs.MySQLContainerName
	})
	if i < 0 {
		return ""
	}
	st := pod.Status.ContainerStatuses[i]
	if st.State.Running != nil && st.Ready {
		return ""
	}
	for _, t := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
		if t != nil && strings.HasPrefix(t.Message, mysql.RefusedStartMessage) {
			return strings.TrimSpace(t.Message)
		}
	}
	return ""
}
