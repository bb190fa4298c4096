package controller

import (
	"encoding/json"

	cmdbackup "github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/backup"
)

// parseJobResult reads the termination message `manager backup` writes.
func parseJobResult(msg string) (cmdbackup.Result, bool) {
	var r cmdbackup.Result
	if msg == "" || json.Unmarshal([]byte(msg), &r) != nil {
		return r, false
	}
	return r, true
}
