// Package schedule parses the six-field cron expressions of ScheduledBackup and does the slot
// arithmetic the controller relies on: which slot is due now, which comes next, and which slots
// were missed. Everything here is pure and in UTC; the caller passes the current time in.
package schedule
