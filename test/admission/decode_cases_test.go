package admission_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The cases below are values the API server admitted before and the operator's informers could
// not decode: one such object made every list of its kind fail, so that the operator reconciled
// no Cluster (or Backup, or ScheduledBackup) in any namespace. Each is now refused at admission;
// the values the operator itself writes are still accepted. Status writes go through the status
// subresource, as the operator's and the instance ServiceAccount's do.

// withStatus returns a statusUpdate that replaces the status with status.
func withStatus(status map[string]any) func(u *unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) { u.Object["status"] = status }
}

// condition is a status condition as the operator writes it, with one field replaced.
func condition(field string, value any) []any {
	c := map[string]any{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
		"lastTransitionTime": "2026-11-25T04:00:00Z", "observedGeneration": int64(1)}
	c[field] = value
	return []any{c}
}

// manyResources returns a resources map of n extended resources, in the manifests' flow style.
func manyResources(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "example.com/r%02d: \"1\", ", i)
	}
	return "{" + strings.TrimSuffix(b.String(), ", ") + "}"
}

const (
	quantityLimits   = "resources.limits values must be quantities"
	quantityRequests = "resources.requests values must be quantities"
	mustMatch        = " in body should match"
)

// statusMismatch is the message of a status field refused by its pattern: the API server names
// the field without "status." after the value.
func statusMismatch(path string) string { return strings.TrimPrefix(path, "status.") + mustMatch }

func TestClusterSpecValuesTheOperatorCannotDecode(t *testing.T) {
	withSpec := func(extra string) string { return validCluster + extra }
	runAdmissionCases(t, []admissionCase{
		{name: "an extended resource limit of 1e1.5 is rejected: it is no quantity",
			manifest: withSpec("  resources: {limits: {example.com/x: \"1e1.5\"}}\n"), wantErr: quantityLimits},
		{name: "an extended resource request of 1e1.5 is rejected",
			manifest: withSpec("  resources: {requests: {example.com/x: \"1e1.5\"}}\n"), wantErr: quantityRequests},
		{name: "a memory limit of 1e1.5 is rejected",
			manifest: withSpec("  resources: {limits: {memory: \"1e1.5\"}}\n"), wantErr: quantityLimits},
		{name: "an extended resource limit of 1e3 is accepted", manifest: withSpec("  resources: {limits: {example.com/x: \"1e3\"}}\n")},
		{name: "an extended resource limit as a number is accepted", manifest: withSpec("  resources: {limits: {example.com/x: 2}}\n")},
		{name: "16 limits are accepted", manifest: withSpec("  resources: {limits: " + manyResources(16) + "}\n")},
		{name: "17 requests are rejected: the isQuantity rule fits the CEL cost budget only for a bounded map",
			manifest: withSpec("  resources: {requests: " + manyResources(17) + "}\n"),
			wantErr:  "spec.resources.requests: Too many: 17: must have at most 16 items"},
		{name: "a storage.size of 1e1.5 is rejected",
			manifest: strings.Replace(validCluster, "size: 1Gi", "size: \"1e1.5\"", 1), wantErr: "storage.size must be a quantity"},
		{name: "a retentionSize of 1e1.5 is rejected",
			manifest: withSpec("  backup:\n" + objectStore + "    retentionSize: \"1e1.5\"\n"), wantErr: "retentionSize must be a quantity"},
		{name: "a recovery targetTime with a lower-case t is rejected: the recovery could not parse it",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {name: nightly}\n      recoveryTarget: {targetTime: \"2026-11-25t04:00:00Z\"}\n"),
			wantErr:  "spec.bootstrap.recovery.recoveryTarget.targetTime" + mustMatch},
		{name: "a recovery targetTime with an offset and microseconds is accepted",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {name: nightly}\n      recoveryTarget: {targetTime: \"2026-11-25T04:00:00.250000+01:00\"}\n")},
	})
}

func TestClusterStatusValuesTheOperatorCannotDecode(t *testing.T) {
	status := func(s map[string]any) admissionCase {
		return admissionCase{manifest: validCluster, statusUpdate: withStatus(s)}
	}
	archive := func(field, value string) map[string]any {
		return map[string]any{"binlogArchive": map[string]any{field: value, "lagSeconds": int64(0)}}
	}
	pointInTime := func(segments int64) map[string]any {
		return map[string]any{"recovery": map[string]any{"pointInTime": map[string]any{
			"target": "latest", "segments": segments, "transactions": int64(7), "gtidExecuted": ""}}}
	}
	cases := []struct {
		name   string
		status map[string]any
		want   string
	}{
		{"a MicroTime without fraction is rejected", archive("lastArchivedTime", "2026-11-25T04:00:00Z"),
			statusMismatch("status.binlogArchive.lastArchivedTime")},
		{"a MicroTime with three fractional digits is rejected", archive("recoverableFrom", "2026-11-25T04:00:00.250Z"),
			statusMismatch("status.binlogArchive.recoverableFrom")},
		{"a MicroTime as the archiver writes it is accepted", archive("recoverableTo", "2026-11-25T04:00:00.250000Z"), ""},
		{"a lower-case t in a Time is rejected", map[string]any{"currentPrimaryTimestamp": "2026-11-25t04:00:00Z"},
			statusMismatch("status.currentPrimaryTimestamp")},
		{"a lower-case z in a Time is rejected", map[string]any{"targetPrimaryTimestamp": "2026-11-25T04:00:00z"},
			statusMismatch("status.targetPrimaryTimestamp")},
		{"a lower-case t in the Time of a nested record is rejected", map[string]any{"fallbackCaughtUp": map[string]any{
			"formerPrimary": "db-1", "failingSince": "2026-11-25T04:00:00Z", "fellBackAt": "2026-11-25t04:00:00Z"}},
			statusMismatch("status.fallbackCaughtUp.fellBackAt")},
		{"a lower-case z in a condition's lastTransitionTime is rejected",
			map[string]any{"conditions": condition("lastTransitionTime", "2026-11-25T04:00:00z")},
			statusMismatch("status.conditions[0].lastTransitionTime")},
		{"a Time with an offset is accepted", map[string]any{"currentPrimaryTimestamp": "2026-11-25T05:00:00+01:00"}, ""},
		{"a segment count beyond int32 is rejected", pointInTime(2147483648),
			"status.recovery.pointInTime.segments: Invalid value: 2147483648"},
		{"the largest int32 segment count is accepted", pointInTime(2147483647), ""},
		{"an observedGeneration beyond 2^53-1 is rejected", map[string]any{"observedGeneration": int64(9007199254740992)},
			"status.observedGeneration: Invalid value: 9007199254740992"},
		{"a condition's observedGeneration beyond 2^53-1 is rejected",
			map[string]any{"conditions": condition("observedGeneration", int64(9007199254740992))},
			"status.conditions[0].observedGeneration: Invalid value"},
		{"a conditions list as the operator writes it is accepted", map[string]any{"conditions": condition("message", "ok")}, ""},
		{"an archive lag beyond 2^53-1 is rejected",
			map[string]any{"binlogArchive": map[string]any{"lagSeconds": int64(9223372036854775807)}},
			"status.binlogArchive.lagSeconds: Invalid value"},
	}
	var admission []admissionCase
	for _, c := range cases {
		ac := status(c.status)
		ac.name, ac.wantUpdateErr = c.name, c.want
		admission = append(admission, ac)
	}
	runAdmissionCases(t, admission)
}

func TestBackupAndScheduledBackupStatusValuesTheOperatorCannotDecode(t *testing.T) {
	runAdmissionCases(t, []admissionCase{
		{name: "a Backup startedAt with a lower-case z is rejected", manifest: validBackup,
			statusUpdate:  withStatus(map[string]any{"startedAt": "2026-11-25T04:00:00z"}),
			wantUpdateErr: statusMismatch("status.startedAt")},
		{name: "a Backup completedAt as the operator writes it is accepted", manifest: validBackup,
			statusUpdate: withStatus(map[string]any{"completedAt": "2026-11-25T04:00:00Z", "size": int64(1) << 40})},
		{name: "a Backup size beyond 2^53-1 is rejected", manifest: validBackup,
			statusUpdate:  withStatus(map[string]any{"size": int64(9007199254740992)}),
			wantUpdateErr: "status.size: Invalid value: 9007199254740992"},
		{name: "a Backup binlogPosition beyond 2^53-1 is rejected", manifest: validBackup,
			statusUpdate:  withStatus(map[string]any{"binlogPosition": int64(9223372036854775807)}),
			wantUpdateErr: "status.binlogPosition: Invalid value"},
		{name: "a Backup condition with a lower-case t is rejected", manifest: validBackup,
			statusUpdate:  withStatus(map[string]any{"conditions": condition("lastTransitionTime", "2026-11-25t04:00:00Z")}),
			wantUpdateErr: statusMismatch("status.conditions[0].lastTransitionTime")},
		{name: "a ScheduledBackup lastScheduleTime with a lower-case t is rejected", manifest: validScheduledBackup,
			statusUpdate:  withStatus(map[string]any{"lastScheduleTime": "2026-11-25t02:00:00Z"}),
			wantUpdateErr: statusMismatch("status.lastScheduleTime")},
		{name: "a ScheduledBackup nextScheduleTime as the operator writes it is accepted", manifest: validScheduledBackup,
			statusUpdate: withStatus(map[string]any{"nextScheduleTime": "2026-11-26T02:00:00Z"})},
		{name: "a ScheduledBackup observedGeneration beyond 2^53-1 is rejected", manifest: validScheduledBackup,
			statusUpdate:  withStatus(map[string]any{"observedGeneration": int64(9007199254740992)}),
			wantUpdateErr: "status.observedGeneration: Invalid value: 9007199254740992"},
	})
}
