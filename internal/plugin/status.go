package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
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
	"sigs.k8s.io/yaml"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
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
	// Events are those of the Cluster and of the objects named after it (its Pods, Backups,
	// Jobs); none when they cannot be listed.
	Events []corev1.Event
}

// gatherClusterView reads the Cluster, its Pods and its primary Lease.
func gatherClusterView(ctx context.Context, c client.Reader, ns, name string) (*ClusterView, error) {
	cluster, err := getCluster(ctx, c, ns, name)
	if err != nil {
		return nil, err
	}
	v := &ClusterView{Cluster: cluster}
	if v.Pods, err = instancePods(ctx, c, cluster); err != nil {
		return nil, err
	}
	var lease coordinationv1.Lease
	switch err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.PrimaryLeaseName(name)}, &lease); {
	case err == nil:
		v.Lease = &lease
	case !apierrors.IsNotFound(err):
		v.LeaseErr = err
	}
	var events corev1.EventList
	if err := c.List(ctx, &events, client.InNamespace(ns)); err == nil {
		var others v1.ClusterList
		_ = c.List(ctx, &others, client.InNamespace(ns)) // without it, a longer Cluster name is not told apart
		for _, e := range events.Items {
			if ofCluster(e.InvolvedObject.Name, name, others.Items) {
				v.Events = append(v.Events, e)
			}
		}
	}
	return v, nil
}

// ofCluster says whether an object named n is the Cluster name or named after it (its Pods,
// Backups, Jobs): not when a longer Cluster of the namespace (db-staging for db) names it.
func ofCluster(n, name string, clusters []v1.Cluster) bool {
	if n == name {
		return true
	}
	if !strings.HasPrefix(n, name+"-") {
		return false
	}
	for _, c := range clusters {
		if len(c.Name) > len(name) && (n == c.Name || strings.HasPrefix(n, c.Name+"-")) {
			return false
		}
	}
	return true
}

// StatusOptions say how `status` renders.
type StatusOptions struct {
	// Output is "" (a table), "json" or "yaml".
	Output string
	// Color marks condition states and Warning Events (a terminal, NO_COLOR unset).
	Color bool
	// Verbose shows every Event and each instance's full GTID set.
	Verbose bool
}

// WriteStatus renders v: a table for a human, or the StatusReport as JSON or YAML. now dates
// ages and the Lease's last renewal.
func WriteStatus(out io.Writer, v *ClusterView, now time.Time, o StatusOptions) error {
	r := BuildStatusReport(v, now)
	switch o.Output {
	case "json":
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	case "":
	default:
		return fmt.Errorf("unknown output %q: json or yaml", o.Output)
	}
	st := v.Cluster.Status
	paint := painter(o.Color)
	if r.OperatorWarning != "" {
		fmt.Fprintf(out, "%s %s\n\n", paint("red", "Warning:"), r.OperatorWarning)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Cluster:\t%s\n", r.Cluster)
	fmt.Fprintf(tw, "Primary:\t%s\n", orNone(r.Primary)+since(r.PrimarySince))
	if r.SwitchoverInProgress {
		fmt.Fprintf(tw, "Target primary:\t%s (switchover or failover in progress%s)\n", orNone(r.TargetPrimary), since(st.TargetPrimaryTimestamp))
	} else {
		fmt.Fprintf(tw, "Target primary:\t%s\n", orNone(r.TargetPrimary))
	}
	if r.PrimaryFailingSince != nil {
		failing := ""
		if r.FailingPrimary != "" {
			failing = " (" + r.FailingPrimary + ")"
		}
		fmt.Fprintf(tw, "Primary failing since:\t%s%s\n", r.PrimaryFailingSince.UTC().Format(time.RFC3339), failing)
	}
	fmt.Fprintf(tw, "Primary lease:\t%s\n", r.Lease.Text)
	if s := r.SemiSync; s != nil {
		fmt.Fprintf(tw, "Semi-sync:\t%s\n", semiSyncText(s, paint))
	}
	fmt.Fprintf(tw, "Failover safe now:\t%s\n", readinessText(r.FailoverReadiness, paint))
	for _, p := range r.PendingUpdates {
		fmt.Fprintf(tw, "Pending:\t%s\n", pendingText(p))
	}
	if a := r.BinlogArchive; a != nil {
		last := "-"
		if a.LastArchivedTime != nil {
			last = a.LastArchivedTime.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "Binlog archive:\tlag %ds, last archived %s\n", a.LagSeconds, last)
	}
	writeProtection(tw, st, now)
	if _, err := v.Cluster.FencedInstancesRequested(); err != nil {
		fmt.Fprintf(tw, "Fencing request:\t%v\n", err)
	}

	if err := tw.Flush(); err != nil {
		return err
	}
	var inst table
	inst.row(plain("INSTANCE"), plain("ROLE"), plain("READY"), plain("FENCED"), plain("DIVERGED"), plain("MISSING"), plain("ERRANT"),
		plain("LAG"), plain("LAG TRX"), plain("IO/SQL"), plain("AGE"), plain("RESTARTS"), plain("NODE"), plain("GTID EXECUTED"))
	for _, i := range r.Instances {
		gtids := orNone(i.GTIDExecuted)
		if !o.Verbose && len(gtids) > 60 {
			gtids = gtids[:57] + "..."
		}
		// Reports are taken at different moments: errant transactions are red only once the
		// operator found the instance diverged, yellow otherwise (a report newer than the
		// primary's shows its newest transactions here for a while).
		errantColor := "yellow"
		if i.Diverged {
			errantColor = "red"
		}
		inst.row(plain(i.Name), plain(orNone(i.Role)), boolCell(i.Ready, true), plain(i.Fenced), yesNoCell(i.Diverged),
			countCell(i.Compared, i.MissingCount, "yellow"), countCell(i.Compared, i.ErrantCount, errantColor),
			lagCell(i.Replication), lagTrxCell(i.Replication), threadsCell(i.Replication), plain(orNone(i.Age)), plain(fmt.Sprint(i.Restarts)), plain(orNone(i.Node)), plain(gtids))
	}
	fmt.Fprintln(out)
	if err := inst.write(out, paint); err != nil {
		return err
	}
	if err := writeThreadErrors(out, r, o.Verbose, paint); err != nil {
		return err
	}
	var conds table
	conds.row(plain("CONDITION"), plain("STATUS"), plain("REASON"), plain("MESSAGE"))
	for _, c := range r.Conditions {
		conds.row(plain(c.Type), conditionCell(c), plain(c.Reason), plain(oneLine(c.Message)))
	}
	fmt.Fprintln(out)
	if err := conds.write(out, paint); err != nil {
		return err
	}
	events := r.Events
	if !o.Verbose && len(events) > maxEvents {
		events = events[:maxEvents]
	}
	if len(events) == 0 {
		return nil
	}
	var evs table
	evs.row(plain("LAST SEEN"), plain("TYPE"), plain("REASON"), plain("OBJECT"), plain("MESSAGE"))
	for _, e := range events {
		typ := plain(e.Type)
		if e.Type == corev1.EventTypeWarning {
			typ.color = "red"
		}
		evs.row(plain(now.Sub(e.LastSeen.Time).Round(time.Second).String()+" ago"), typ, plain(e.Reason), plain(e.Object), plain(oneLine(e.Message)))
	}
	fmt.Fprintln(out)
	return evs.write(out, paint)
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
	o := StatusOptions{}
	cmd := &cobra.Command{
		Use:   "status CLUSTER",
		Short: "Show a Cluster at a glance: primary, Lease, semi-sync, failover safety, pending updates, instances (missing and errant GTIDs, lag, threads), backups, conditions, Events",
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
			o.Color = isTerminal(e.streams.Out) && os.Getenv("NO_COLOR") == ""
			return WriteStatus(e.streams.Out, v, e.clock.Now(), o)
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "json or yaml instead of the table")
	cmd.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "every Event, whole GTID sets")
	return cmd
}
