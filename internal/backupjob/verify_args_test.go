package backupjob

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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

// TestEncodeVerifyResultFitsATerminationMessage: a result with a long, escaped message and a long
// GTID set still encodes within 4000 bytes, as valid JSON that parses back, both parts marked cut.
func TestEncodeVerifyResultFitsATerminationMessage(t *testing.T) {
	var gtids []string
	for i := range 200 {
		gtids = append(gtids, fmt.Sprintf("%08d-71ca-11e1-9e33-c80aa9429562:1-%d", i, i+5))
	}
	r := VerifyResult{Reason: "TableCheckFailed", Message: strings.Repeat("\"é\n", 700), GTIDExecuted: strings.Join(gtids, ",")}
	b, err := EncodeVerifyResult(r)
	if err != nil || len(b) > 4000 {
		t.Fatalf("%d bytes, %v", len(b), err)
	}
	got, ok := ParseVerifyResult(string(b))
	if !ok || got.Reason != "TableCheckFailed" || !strings.Contains(got.Message, "…") || !utf8.ValidString(got.Message) {
		t.Errorf("parsed %v: %+v", ok, got)
	}
	small := VerifyResult{Passed: true, GTIDExecuted: "u:1-5"}
	if b, _ := EncodeVerifyResult(small); string(b) != `{"passed":true,"gtidExecuted":"u:1-5"}` {
		t.Errorf("a small result changed: %s", b)
	}
}
