package v1alpha1

import "time"

// childNameLayout is the UTC timestamp suffix of scheduled Backup names.
const childNameLayout = "20060102150405"

// BackupName is the deterministic name of the Backup for the given slot: <name>-<YYYYMMDDHHMMSS>
// of the slot in UTC. The same slot always yields the same name, so retries are idempotent.
func (s *ScheduledBackup) BackupName(slot time.Time) string {
	return s.Name + "-" + slot.UTC().Format(childNameLayout)
}

// IsSuspended reports whether scheduling is paused.
func (s *ScheduledBackup) IsSuspended() bool {
	return s.Spec.Suspend != nil && *s.Spec.Suspend
}

// IsImmediate reports whether a Backup is wanted on the first reconcile.
func (s *ScheduledBackup) IsImmediate() bool {
	return s.Spec.Immediate != nil && *s.Spec.Immediate
}

// WantsSkipImmediately reports whether the next immediately-due run is to be skipped. An unset
// spec.skipImmediately is the operator's default (its --schedule-skip-immediately) only until the
// schedule first runs or skips something (status.lastScheduleTime or status.lastSkipped set);
// after that, unset is false, so a later change of the operator's flag never skips a due run of
// an existing schedule.
func (s *ScheduledBackup) WantsSkipImmediately(operatorDefault bool) bool {
	if s.Spec.SkipImmediately == nil {
		return operatorDefault && s.Status.LastScheduleTime == nil && s.Status.LastSkipped == nil
	}
	return *s.Spec.SkipImmediately
}
