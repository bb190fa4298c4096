package plugin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// ClusterView is what `status` shows of a Cluster: the Cluster, its instance Pods and its
// primary Lease (nil when there is none; LeaseErr when it could not be read, such as without
// the permission to).
type ClusterView struct {
	Cluster  *v1.Cluster
	Pods     []corev1.Pod
	Lease    *coordinationv1.Lease
	LeaseErr error
}

// gatherClusterView reads the Cluster, its Pods and its primary Lease.
func gatherClusterView(ctx context.Context, c client.Reader, ns, name string) (*ClusterView, error) {
	cluster, err := getCluster(ctx, c, ns, name)
	if err != nil {
		return nil, err
	}
	v := &ClusterView{Cluster: cluster}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{v1.ClusterLabel: name}); err != nil {
		return nil, fmt.Errorf("listing the Pods of Cluster %s/%s: %w", ns, name, err)
	}
	v.Pods = pods.Items
	var lease coordinationv1.Lease
	switch err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.PrimaryLeaseName(name)}, &lease); {
	case err == nil:
		v.Lease = &lease
	case !apierrors.IsNotFound(err):
		v.LeaseErr = err
	}
	return v, nil
}

// WriteStatus renders v for a human: the primaries, the Lease, one line per instance and the
// conditions. now dates the Lease's last renewal.
func WriteStatus(out io.Writer, v *ClusterView, now time.Time) error {
	c, st := v.Cluster, v.Cluster.Status
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Cluster:\t%s/%s\n", c.Namespace, c.Name)
	fmt.Fprintf(tw, "Primary:\t%s\n", orNone(st.CurrentPrimary)+since(st.CurrentPrimaryTimestamp))
	switch {
	case st.TargetPrimary != st.CurrentPrimary:
		fmt.Fprintf(tw, "Target primary:\t%s (switchover or failover in progress%s)\n", orNone(st.TargetPrimary), since(st.TargetPrimaryTimestamp))
	default:
		fmt.Fprintf(tw, "Target primary:\t%s\n", orNone(st.TargetPrimary))
	}
	if st.PrimaryFailingSince != nil {
		failing := ""
		if st.FailingPrimary != "" {
			failing = " (" + st.FailingPrimary + ")"
		}
		fmt.Fprintf(tw, "Primary failing since:\t%s%s\n", st.PrimaryFailingSince.UTC().Format(time.RFC3339), failing)
	}
	fmt.Fprintf(tw, "Primary lease:\t%s\n", describeLease(specs.PrimaryLeaseName(c.Name), v.Lease, v.LeaseErr, now))
	writeProtection(tw, st, now)
	requested, reqErr := c.FencedInstancesRequested()
	if reqErr != nil {
		fmt.Fprintf(tw, "Fencing request:\t%v\n", reqErr)
	}
	fmt.Fprintln(tw)

	fmt.Fprintln(tw, "INSTANCE\tROLE\tREADY\tFENCED\tDIVERGED\tGTID EXECUTED")
	for _, p := range sortedBySerial(c.Name, v.Pods) {
		fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%s\t%s\n", p.Name, orNone(p.Labels[v1.RoleLabel]), instances.PodReady(&p),
			fencedState(st.FencedInstances, requested, p.Name), yesNo(slices.Contains(st.DivergedInstances, p.Name)),
			orNone(st.GTIDExecutedByInstance[p.Name]))
	}
	fmt.Fprintln(tw)

	fmt.Fprintln(tw, "CONDITION\tSTATUS\tREASON\tMESSAGE")
	for _, cond := range st.Conditions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cond.Type, cond.Status, cond.Reason, cond.Message)
	}
	return tw.Flush()
}

// describeLease says who holds the primary Lease and whether it is still valid at now.
func describeLease(name string, l *coordinationv1.Lease, err error, now time.Time) string {
	switch {
	case err != nil:
		return fmt.Sprintf("%s unknown: %v", name, err)
	case l == nil:
		return name + " not held"
	}
	holder := "nobody"
	if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
		holder = *l.Spec.HolderIdentity
	}
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return fmt.Sprintf("%s held by %s, never renewed", name, holder)
	}
	ttl := time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	age := now.Sub(l.Spec.RenewTime.Time).Truncate(time.Second)
	state := "valid"
	if age > ttl {
		state = "expired"
	}
	return fmt.Sprintf("%s held by %s, renewed %s ago (TTL %s, %s)", name, holder, age, ttl, state)
}

// fencedState is "yes" when the operator lists the instance as fenced, "requested" when only the
// annotation asks for it (the operator has not acted yet), "unfencing" for the reverse.
func fencedState(status, requested []string, name string) string {
	inStatus, inRequest := v1.FencedInstancesContain(status, name), v1.FencedInstancesContain(requested, name)
	switch {
	case inStatus && inRequest:
		return "yes"
	case inRequest:
		return "requested"
	case inStatus:
		return "unfencing"
	}
	return "no"
}

func sortedBySerial(cluster string, pods []corev1.Pod) []corev1.Pod {
	out := slices.Clone(pods)
	slices.SortFunc(out, func(a, b corev1.Pod) int {
		sa, _ := specs.InstanceSerial(cluster, a.Name)
		sb, _ := specs.InstanceSerial(cluster, b.Name)
		if sa != sb {
			return int(sa - sb)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

func since(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return " since " + t.UTC().Format(time.RFC3339)
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func newStatusCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "status CLUSTER",
		Short: "Show a Cluster's primary, instances, fencing, primary Lease, backups and conditions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := e.client()
			if err != nil {
				return err
			}
			v, err := gatherClusterView(cmd.Context(), c, ns, args[0])
			if err != nil {
				return err
			}
			return WriteStatus(e.streams.Out, v, e.clock.Now())
		},
	}
}
