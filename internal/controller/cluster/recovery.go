package cluster

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// readRecoveryBackup reads the Backup a Cluster's bootstrap.recovery names; nil when it names
// none or the Backup does not exist (the first instance reports that on the Cluster).
func (r *Reconciler) readRecoveryBackup(ctx context.Context, c *v1.Cluster) (*v1.Backup, error) {
	name := c.Recovery().BackupName()
	if name == "" {
		return nil, nil
	}
	var b v1.Backup
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &b); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the recovery Backup %s: %w", name, err)
	}
	return &b, nil
}
