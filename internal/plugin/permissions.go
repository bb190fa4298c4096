package plugin

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// needs adds to a refusal of the API server (403) the permission a verb lacked and what to do
// about it; any other error is returned as it is. resource may name a subresource after a slash
// (clusters.mysql.cloudnative-mysql.io/status).
func needs(err error, verb, resource, ns string) error {
	if !apierrors.IsForbidden(err) {
		return err
	}
	canI := resource
	if r, sub, ok := strings.Cut(resource, "/"); ok {
		canI = r + " --subresource=" + sub
	}
	return fmt.Errorf("%w: your account needs %s on %s in namespace %s; ask an administrator to grant it "+
		"(kubectl auth can-i %s %s -n %s checks it; docs/plugin.md#permissions lists what each verb needs)",
		err, verb, resource, ns, verb, canI, ns)
}
