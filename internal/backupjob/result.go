package backupjob

import "encoding/json"

// DefaultTerminationLog is where Kubernetes reads a container's termination message.
const DefaultTerminationLog = "/dev/termination-log"

// Result is the termination message of a backup Job: what the controller may show, never a
// secret. The controller trusts only metadata.json for completion; it cross-checks Checksum
// against it and shows Error when the Job failed.
type Result struct {
	BackupID     string `json:"backupId,omitempty"`
	Checksum     string `json:"checksum,omitempty"`
	Size         int64  `json:"size,omitempty"`
	GTIDExecuted string `json:"gtidExecuted,omitempty"`
	Error        string `json:"error,omitempty"`
}

// ParseResult reads a termination message; ok is false when there is none or it is not a Result.
func ParseResult(msg string) (r Result, ok bool) {
	if msg == "" || json.Unmarshal([]byte(msg), &r) != nil {
		return Result{}, false
	}
	return r, true
}
