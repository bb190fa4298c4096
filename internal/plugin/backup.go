package plugin

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// BackupOptions are the flags of `backup`.
type BackupOptions struct {
	// Name of the Backup; <cluster>-<YYYYMMDDHHMMSS> of now (UTC) when empty.
	Name   string
	Method string
	Target string
	// Offline asks for an offline backup (spec.online=false).
	Offline bool
}

// BuildOnDemandBackup returns the Backup `kubectl cloudnative-mysql backup` creates. Fields left
// empty take the schema defaults on the server.
func BuildOnDemandBackup(namespace, cluster string, opts BackupOptions, now time.Time) *v1.Backup {
	name := opts.Name
	if name == "" {
		name = GeneratedBackupName(cluster, now)
	}
	b := &v1.Backup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{v1.ClusterLabel: cluster}},
		Spec: v1.BackupSpec{
			Cluster: v1.LocalObjectReference{Name: cluster},
			Method:  v1.BackupMethod(opts.Method),
			Target:  v1.BackupTarget(opts.Target),
		},
	}
	if opts.Offline {
		online := false
		b.Spec.Online = &online
	}
	return b
}

// GeneratedBackupName is <cluster>-<YYYYMMDDHHMMSS> of now (UTC), with the Cluster's name cut so
// that the whole fits the 63 characters of a Backup name.
func GeneratedBackupName(cluster string, now time.Time) string {
	stamp := now.UTC().Format("20060102150405")
	prefix := cluster[:min(len(cluster), 63-1-len(stamp))]
	return strings.TrimRight(prefix, "-.") + "-" + stamp
}

func newBackupCommand(e *env) *cobra.Command {
	opts := BackupOptions{}
	cmd := &cobra.Command{
		Use:   "backup CLUSTER",
		Short: "Request an on-demand backup of a Cluster",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := e.client()
			if err != nil {
				return err
			}
			// The Cluster is read only to refuse a name that is none and to warn when the operator
			// is not running: an account allowed to create Backups alone still may.
			cluster, err := getCluster(cmd.Context(), c, ns, args[0])
			if err != nil && !apierrors.IsForbidden(err) {
				return err
			}
			b := BuildOnDemandBackup(ns, args[0], opts, e.clock.Now())
			if err := c.Create(cmd.Context(), b); err != nil {
				return fmt.Errorf("creating Backup %s/%s: %w", ns, b.Name, needs(err, "create", "backups.mysql.cloudnative-mysql.io", ns))
			}
			fmt.Fprintf(e.streams.Out, "backup/%s created in namespace %s\n", b.Name, ns)
			if cluster != nil {
				e.warnOperatorSilence(cluster)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Name, "backup-name", "", "name of the Backup (default <cluster>-<UTC timestamp>)")
	f.StringVar(&opts.Method, "method", "", "clone or xtrabackup (default: the schema default, clone); this build runs clone only: the operator fails an xtrabackup Backup at once")
	f.StringVar(&opts.Target, "target", "", "primary or prefer-standby (default: the schema default, prefer-standby)")
	f.BoolVar(&opts.Offline, "offline", false, "ask for an offline backup (online: false); not supported by this build: the operator fails such a Backup at once")
	return cmd
}
