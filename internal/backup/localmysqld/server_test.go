package localmysqld_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
)

// TestStartWithALongRunDirectory starts a server whose socket path is longer than a Unix socket
// address can be (as a chrooted test server's host path is): the client still connects (through a
// short symlink), and Shutdown is clean.
func TestStartWithALongRunDirectory(t *testing.T) {
	m := backuptest.MysqldT(t)
	base := filepath.Join(backuptest.Scratch(t, m), strings.Repeat("long-dir/", 3))
	opts := localmysqld.Options{DataDir: filepath.Join(base, "data"), RunDir: filepath.Join(base, "run")}
	if len(filepath.Join(opts.RunDir, "mysqld.sock")) < 108 {
		t.Fatalf("the socket path is not long enough to test: %s", opts.RunDir)
	}
	if err := localmysqld.Initialize(t.Context(), m, opts); err != nil {
		t.Fatal(err)
	}
	srv, err := localmysqld.Start(t.Context(), m, opts)
	if err != nil {
		t.Fatal(err)
	}
	var one int
	if err := srv.DB().QueryRowContext(t.Context(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("query: %d, %v", one, err)
	}
	if err := srv.Shutdown(); err != nil {
		t.Error(err)
	}
}

func TestToolKeepsTheLaunchPrefix(t *testing.T) {
	for _, tc := range []struct {
		rule string
		cmd  localmysqld.Command
		want []string
	}{
		{"a Pod runs the program itself", localmysqld.Command{}, []string{"/usr/bin/mysqlbinlog", "-V"}},
		{"a chroot prefix applies to the program", localmysqld.Command{Argv: []string{"/usr/sbin/chroot", "/rootfs", localmysqld.DefaultMysqld}, Args: []string{"--user=root"}},
			[]string{"/usr/sbin/chroot", "/rootfs", "/usr/bin/mysqlbinlog", "-V"}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := tc.cmd.Tool("/usr/bin/mysqlbinlog", "-V"); !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
