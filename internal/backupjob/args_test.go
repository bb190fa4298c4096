package backupjob

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

func parse(t *testing.T, args []string) Args {
	t.Helper()
	var a Args
	fs := pflag.NewFlagSet("backup", pflag.ContinueOnError)
	a.Bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	return a
}

// TestFlagsParseBackToTheArgs: what the Job's builder renders, the command parses back to the
// same Args.
func TestFlagsParseBackToTheArgs(t *testing.T) {
	full := Args{Cluster: "db", Namespace: "ns", BackupName: "b1", BackupID: "20260101T000000Z", Method: "xtrabackup",
		TargetHost: "db-2.ns.svc", TargetPort: 3307, User: "backup", PasswordFile: "/p", CAFile: "/ca", CertFile: "/crt",
		KeyFile: "/key", ScratchDir: "/s", TerminationLog: "/t",
		Store: Store{Bucket: "bk", Path: "prod", Endpoint: "https://s3", Region: "eu", ForcePathStyle: true,
			AccessKeyIDFile: "/id", SecretAccessKeyFile: "/secret", SessionTokenFile: "/token", EndpointCAFile: "/eca"}}
	if got := parse(t, full.Flags()); got != full {
		t.Errorf("parsed %+v, want %+v", got, full)
	}
}

// TestFlagsLeaveZeroFieldsToTheDefaults: a field the builder does not set is not on the command
// line, and the command's default applies.
func TestFlagsLeaveZeroFieldsToTheDefaults(t *testing.T) {
	a := Args{Cluster: "db", Store: Store{Bucket: "bk"}}
	if got, want := a.Flags(), []string{"--cluster=db", "--bucket=bk"}; !slices.Equal(got, want) {
		t.Errorf("flags %q, want %q", got, want)
	}
	got := parse(t, a.Flags())
	if got.Method != "clone" || got.TargetPort != 3306 || got.ScratchDir != "/scratch" || got.TerminationLog != DefaultTerminationLog {
		t.Errorf("defaults %+v", got)
	}
}

func TestParseResult(t *testing.T) {
	for _, tc := range []struct {
		rule string
		msg  string
		want Result
		ok   bool
	}{
		{"no message", "", Result{}, false},
		{"not JSON (a crash's last words)", "panic: boom", Result{}, false},
		{"a success", `{"checksum":"sha256:aa","size":10}`, Result{Checksum: "sha256:aa", Size: 10}, true},
		{"a failure", `{"error":"clone: refused"}`, Result{Error: "clone: refused"}, true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, ok := ParseResult(tc.msg)
			if got != tc.want || ok != tc.ok {
				t.Errorf("%+v %v, want %+v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
