package backupjob

import (
	"encoding/json"
	"strings"
)

// VerifyResult is the termination message of a verification Job: what the controller records on
// the Backup and the Cluster. Kubernetes keeps at most 4096 bytes of it, so the message is
// bounded (MaxVerifyMessage) and the per-table figures stay in the Job's log.
type VerifyResult struct {
	// Passed is true when every step succeeded; Reason names the step that failed otherwise.
	Passed  bool   `json:"passed"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// GTIDExecuted is the restored server's gtid_executed after the replay (the backup's when
	// nothing was replayed).
	GTIDExecuted string `json:"gtidExecuted,omitempty"`
	// Segments and Transactions are what was replayed from the binlog archive.
	Segments     int   `json:"segments,omitempty"`
	Transactions int64 `json:"transactions,omitempty"`
	// Tables is the number of tables of the restored data; TablesChecked how many CHECK TABLE
	// passed within the budget (fewer when the budget ran out: a sample); Rows the rows counted
	// in the checked tables.
	Tables        int   `json:"tables,omitempty"`
	TablesChecked int   `json:"tablesChecked,omitempty"`
	Rows          int64 `json:"rows,omitempty"`
	// The time of each step, in milliseconds.
	RestoreMillis int64 `json:"restoreMillis,omitempty"`
	ReplayMillis  int64 `json:"replayMillis,omitempty"`
	CheckMillis   int64 `json:"checkMillis,omitempty"`
}

// MaxVerifyMessage bounds VerifyResult.Message before it is encoded.
const MaxVerifyMessage = 2048

// maxTerminationMessage is below the 4096 bytes the kubelet keeps of a termination message.
const maxTerminationMessage = 4000

// EncodeVerifyResult encodes r as a termination message of at most 4000 bytes: when the JSON is
// longer (escaping, a long GTID set), the message is cut from its middle, then the GTID set, each
// marked with "…".
func EncodeVerifyResult(r VerifyResult) ([]byte, error) {
	for {
		b, err := json.Marshal(r)
		if err != nil || len(b) <= maxTerminationMessage {
			return b, err
		}
		over := len(b) - maxTerminationMessage + 8
		switch {
		case len(r.Message) > 64:
			r.Message = Shorten(r.Message, max(len(r.Message)-over, 64))
		case len(r.GTIDExecuted) > 64:
			r.GTIDExecuted = Shorten(r.GTIDExecuted, max(len(r.GTIDExecuted)-over, 64))
		default:
			r.Message, r.GTIDExecuted = "", ""
		}
	}
}

// Shorten keeps the start and the end of s (an error log's tail is at the end), at most about n
// bytes in all, on valid UTF-8, marking the cut with "…"; s when it is not longer than n.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	head := (n - len(mark)) / 2
	tail := n - len(mark) - head
	return strings.ToValidUTF8(s[:head], "") + mark + strings.ToValidUTF8(s[len(s)-tail:], "")
}

// Sampled says whether the budget ran out before every table was checked.
func (r VerifyResult) Sampled() bool { return r.TablesChecked < r.Tables }

// ParseVerifyResult reads a verification Job's termination message; ok is false when there is
// none or it is not a VerifyResult.
func ParseVerifyResult(msg string) (r VerifyResult, ok bool) {
	if msg == "" || json.Unmarshal([]byte(msg), &r) != nil {
		return VerifyResult{}, false
	}
	return r, true
}
