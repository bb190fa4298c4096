package backupjob

import (
	"reflect"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestVerifyFlagsParseBackToTheArgs: what the verification Job's builder renders, `manager
// verify` parses back to the same VerifyArgs, repeated mysqld options in order.
func TestVerifyFlagsParseBackToTheArgs(t *testing.T) {
	full := VerifyArgs{Cluster: "db", BackupName: "b1", BackupID: "20260101T000000Z", Archive: "db", ScratchDir: "/s",
		MysqldArgs: []string{"--innodb-page-size=16384", "--lower-case-table-names=1"}, CheckBudget: 90 * time.Second,
		TerminationLog: "/t", Store: Store{Bucket: "bk", Path: "prod", AccessKeyIDFile: "/id"}}
	var got VerifyArgs
	fs := pflag.NewFlagSet("verify", pflag.ContinueOnError)
	got.Bind(fs)
	if err := fs.Parse(full.Flags()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, full) {
		t.Errorf("parsed %+v, want %+v", got, full)
	}
}

// TestParseVerifyResult: a result round-trips; a crash's last words are no result.
func TestParseVerifyResult(t *testing.T) {
	if _, ok := ParseVerifyResult("fatal error: out of memory"); ok {
		t.Error("a non-JSON message parsed as a result")
	}
	r, ok := ParseVerifyResult(`{"passed":false,"reason":"TableCheckFailed","tables":4,"tablesChecked":2}`)
	if !ok || r.Passed || r.Reason != "TableCheckFailed" || !r.Sampled() {
		t.Errorf("parsed %+v, %v", r, ok)
	}
}
