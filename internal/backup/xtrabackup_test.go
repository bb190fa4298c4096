package backup_test

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup"
)

const xbPassword = `x"b\S3cret'pw`

func xbProducer(t *testing.T, password string) *backup.XtrabackupProducer {
	t.Helper()
	p, err := backup.NewXtrabackupProducer(backup.XtrabackupConfig{
		ScratchDir: "/scratch", Host: "pc1-2.ns.svc", Port: 3306, User: "backup", Password: password,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestXtrabackupArgv(t *testing.T) {
	got := xbProducer(t, xbPassword).Argv()
	want := []string{
		"/usr/bin/xtrabackup",
		"--defaults-file=/scratch/xtrabackup.cnf",
		"--backup",
		"--stream=xbstream",
		"--target-dir=/scratch/target",
		"--extra-lsndir=/scratch/lsn",
	}
	if !slices.Equal(got, want) {
		t.Errorf("argv\n got %q\nwant %q", got, want)
	}
	for _, a := range got {
		if strings.Contains(a, "S3cret") || strings.Contains(a, "password") {
			t.Errorf("argument %q carries the password", a)
		}
	}
}

func TestXtrabackupDefaultsFile(t *testing.T) {
	doc, err := xbProducer(t, xbPassword).DefaultsFile()
	if err != nil {
		t.Fatal(err)
	}
	want := "[xtrabackup]\nhost=\"pc1-2.ns.svc\"\nport=\"3306\"\nuser=\"backup\"\npassword=\"x\\\"b\\\\S3cret'pw\"\n"
	if string(doc) != want {
		t.Errorf("defaults file\n got %q\nwant %q", doc, want)
	}
	if _, err := xbProducer(t, "two\nlines").DefaultsFile(); err == nil {
		t.Error("a password with a line break was accepted")
	}
}

func TestXtrabackupNeverRunsWithThePasswordInItsEnvironment(t *testing.T) {
	// The binary does not exist here: Start fails when the stream runs, and the defaults file is
	// the only place the password was written.
	dir := t.TempDir()
	p, err := backup.NewXtrabackupProducer(backup.XtrabackupConfig{Binary: dir + "/no-xtrabackup",
		ScratchDir: dir, Host: "h", Port: 3306, User: "backup", Password: xbPassword})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, s.Archive)
	if _, err := s.Wait(); err == nil || strings.Contains(err.Error(), "S3cret") {
		t.Errorf("wait: %v", err)
	}
	info, err := os.Stat(dir + "/xtrabackup.cnf")
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("defaults file: %v, mode %v", err, info.Mode())
	}
}

func TestParseXtrabackupInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		info string
		want backup.Coordinates
		bad  bool
	}{
		{name: "GTID set over several lines", info: "uuid = 1\nserver_version = 8.4.3-3\nbinlog_pos = filename 'binlog.000007', position '1234', GTID of the last change '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5,\n" +
			"4e11fa47-71ca-11e1-9e33-c80aa9429562:1-2'\nend_time = 2026-01-01 00:00:00\n",
			want: backup.Coordinates{ServerVersion: "8.4.3-3", BinlogFile: "binlog.000007", BinlogPosition: 1234,
				GTIDExecuted: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5,4e11fa47-71ca-11e1-9e33-c80aa9429562:1-2"}},
		{name: "GTID set never closed", info: "server_version = 8.4.3-3\nbinlog_pos = filename 'b.1', position '4', GTID of the last change 'x:1-5,\n", bad: true},
		{name: "single-line GTID set", info: "server_version = 8.4.3-3\nbinlog_pos = filename 'binlog.000007', position '1234', GTID of the last change '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5,4e11fa47-71ca-11e1-9e33-c80aa9429562:1-2'\n",
			want: backup.Coordinates{ServerVersion: "8.4.3-3", BinlogFile: "binlog.000007", BinlogPosition: 1234,
				GTIDExecuted: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5,4e11fa47-71ca-11e1-9e33-c80aa9429562:1-2"}},
		{name: "without GTIDs", info: "server_version = 8.4.3-3\nbinlog_pos = filename 'binlog.000001', position '157'\n",
			want: backup.Coordinates{ServerVersion: "8.4.3-3", BinlogFile: "binlog.000001", BinlogPosition: 157}},
		{name: "no binlog position", info: "server_version = 8.4.3-3\n", bad: true},
		{name: "garbled binlog position", info: "server_version = 8.4.3-3\nbinlog_pos = somewhere\n", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := backup.ParseXtrabackupInfo([]byte(tc.info))
			if tc.bad {
				if err == nil {
					t.Fatalf("accepted: %+v", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
