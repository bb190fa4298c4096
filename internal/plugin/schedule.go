package plugin

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// newScheduleCommand returns `schedule pause|unpause|list` (seed 002).
func newScheduleCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "schedule", Short: "Pause, unpause and list ScheduledBackups"}
	cmd.AddCommand(newSchedulePauseCommand(e), newScheduleUnpauseCommand(e), newScheduleListCommand(e))
	return cmd
}

func newSchedulePauseCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "pause SCHEDULE",
		Short: "Suspend a ScheduledBackup: no slot runs until it is unpaused",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.patchSchedule(cmd, args[0], SchedulePatch(true, nil), "paused")
		},
	}
}

func newScheduleUnpauseCommand(e *env) *cobra.Command {
	var skip bool
	cmd := &cobra.Command{
		Use:   "unpause SCHEDULE",
		Short: "Resume a suspended ScheduledBackup",
		Long: "Resume a suspended ScheduledBackup. A run due at that moment (a slot missed while paused) runs at once,\n" +
			"unless --skip-immediately (or the schedule's spec.skipImmediately, or the operator's\n" +
			"--schedule-skip-immediately when the schedule leaves it unset) says to skip it; the next slot runs\n" +
			"either way. --skip-immediately=false runs the due slot whatever the schedule says.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var s *bool
			if cmd.Flags().Changed("skip-immediately") {
				s = &skip
			}
			return e.patchSchedule(cmd, args[0], SchedulePatch(false, s), "unpaused")
		},
	}
	cmd.Flags().BoolVar(&skip, "skip-immediately", false,
		"skip the run due right away (sets spec.skipImmediately in the same patch; unset: the schedule's own)")
	return cmd
}

// SchedulePatch is the merge patch of pause (suspend true) or unpause (suspend false), with
// skipImmediately when given: one patch, so the operator never sees a schedule unpaused without
// the skip asked for with it.
func SchedulePatch(suspend bool, skipImmediately *bool) []byte {
	p := `{"spec":{"suspend":` + strconv.FormatBool(suspend)
	if skipImmediately != nil {
		p += `,"skipImmediately":` + strconv.FormatBool(*skipImmediately)
	}
	return []byte(p + "}}")
}

func (e *env) patchSchedule(cmd *cobra.Command, name string, patch []byte, what string) error {
	c, ns, err := e.client()
	if err != nil {
		return err
	}
	sb := &v1.ScheduledBackup{}
	sb.Namespace, sb.Name = ns, name
	if err := c.Patch(cmd.Context(), sb, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("patching ScheduledBackup %s/%s: %w", ns, name, explain(err))
	}
	fmt.Fprintf(e.streams.Out, "scheduledbackup/%s %s\n", name, what)
	return nil
}

func newScheduleListCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "list [CLUSTER]",
		Short: "List the ScheduledBackups (of one Cluster): next and last run, last skip, paused",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := e.client()
			if err != nil {
				return err
			}
			var list v1.ScheduledBackupList
			if err := c.List(cmd.Context(), &list, client.InNamespace(ns)); err != nil {
				return fmt.Errorf("listing the ScheduledBackups of %s: %w", ns, explain(err))
			}
			items := list.Items
			if len(args) == 1 {
				items = slices.DeleteFunc(items, func(s v1.ScheduledBackup) bool { return s.Spec.Cluster.Name != args[0] })
			}
			WriteScheduleList(e.streams.Out, items, e.clock.Now())
			return nil
		},
	}
}

// WriteScheduleList renders schedules as a table, by name.
func WriteScheduleList(out io.Writer, schedules []v1.ScheduledBackup, now time.Time) {
	slices.SortFunc(schedules, func(a, b v1.ScheduledBackup) int { return strings.Compare(a.Name, b.Name) })
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tCLUSTER\tSCHEDULE\tPAUSED\tNEXT\tLAST\tLAST SKIPPED\tSKIP IMMEDIATELY")
	for _, s := range schedules {
		skip := "operator default"
		if s.Spec.SkipImmediately != nil {
			skip = strconv.FormatBool(*s.Spec.SkipImmediately)
		}
		next := timeOrDash(s.Status.NextScheduleTime, now)
		if s.IsSuspended() {
			next = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%t\t%s\t%s\t%s\t%s\n", s.Name, s.Spec.Cluster.Name, s.Spec.Schedule, s.IsSuspended(),
			next, timeOrDash(s.Status.LastScheduleTime, now), timeOrDash(s.Status.LastSkipped, now), skip)
	}
	_ = w.Flush()
}

// explain adds what to do to an API error the user can act on.
func explain(err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w (list them with: kubectl get scheduledbackups; -n selects the namespace)", err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%w (your account lacks the permission; ask for patch on scheduledbackups.mysql.cloudnative-mysql.io)", err)
	}
	return err
}

// timeOrDash renders t with how far it is from now, "-" when unset.
func timeOrDash(t *metav1.Time, now time.Time) string {
	if t == nil {
		return "-"
	}
	d := t.Time.Sub(now).Round(time.Second)
	if d >= 0 {
		return fmt.Sprintf("%s (in %s)", stampOf(t.Time), d)
	}
	return fmt.Sprintf("%s (%s ago)", stampOf(t.Time), -d)
}
