package plugin

import (
	"fmt"
	"io"
	"strings"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// writeProtection renders the Cluster's object store location and backup protection, as the
// operator recorded them (status.objectStoreLocation, status.backups); nothing for a Cluster
// without an object store.
func writeProtection(w io.Writer, st v1.ClusterStatus, now time.Time) {
	if loc := st.ObjectStoreLocation; loc != nil {
		line := fmt.Sprintf("%s (%s)", loc.Location, loc.Phase)
		if loc.Phase != v1.LocationClaimed {
			line += ": " + loc.Message
		}
		fmt.Fprintf(w, "Object store:\t%s\n", line)
	}
	b := st.Backups
	if b == nil {
		return
	}
	if s := b.LastSuccessful; s != nil && s.CompletedAt != nil {
		fmt.Fprintf(w, "Last backup:\t%s completed %s (%s ago), %d bytes\n", s.Name, stampOf(s.CompletedAt.Time),
			now.Sub(s.CompletedAt.Time).Round(time.Second), s.Size)
	} else {
		fmt.Fprintf(w, "Last backup:\tnone completed\n")
	}
	if f := b.LastFailed; f != nil && f.At != nil {
		fmt.Fprintf(w, "Last failed backup:\t%s at %s (%s ago): %s\n", f.Name, stampOf(f.At.Time), now.Sub(f.At.Time).Round(time.Second), oneLine(f.Reason))
	}
	if b.ListedAt != nil {
		fmt.Fprintf(w, "In the object store:\t%d complete backup(s), %d bytes (listed %s)\n", b.Restorable, b.RestorableBytes, stampOf(b.ListedAt.Time))
	}
	if b.FirstRecoverablePoint != nil {
		fmt.Fprintf(w, "Recoverable from:\t%s\n", stampOf(b.FirstRecoverablePoint.Time))
	}
	if b.NextScheduled != nil {
		fmt.Fprintf(w, "Next scheduled backup:\t%s\n", stampOf(b.NextScheduled.Time))
	}
	writeVerification(w, st.LastVerifiedBackup, now)
}

// writeVerification renders the Cluster's last restore verification (status.lastVerifiedBackup).
func writeVerification(w io.Writer, l *v1.LastVerifiedBackup, now time.Time) {
	if l == nil || l.CompletedAt == nil {
		return
	}
	result := "passed"
	if !l.Passed {
		result = "FAILED (" + l.Reason + ")"
	}
	line := fmt.Sprintf("%s %s %s (%s ago)", l.Name, result, stampOf(l.CompletedAt.Time), now.Sub(l.CompletedAt.Time).Round(time.Second))
	if !l.Passed && l.LastPassedAt != nil {
		line += "; last passed " + stampOf(l.LastPassedAt.Time)
	}
	fmt.Fprintf(w, "Last verification:\t%s\n", line)
}

func stampOf(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// oneLine keeps a multi-line error on its line of the table.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
