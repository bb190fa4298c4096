package backup_test

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	cmdbackup "github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/backup"
	cmdrestore "github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/restore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

const password = "cmd-S3cret\"'pw"

// TestBackupThenRestoreCommands runs `manager backup` and `manager restore` against a real mysqld
// and a real S3 server, with every secret in a file, and checks the termination message.
func TestBackupThenRestoreCommands(t *testing.T) {
	srv := mysqldtest.Start(t, mysqldtest.Options{})[0]
	op, err := mysql.NewFactory().New(srv.MySQLConfig("root", "", ""))
	must(t, err)
	defer op.Close()
	must(t, op.CreateUsers(t.Context(), mysql.Users{
		Replication: mysql.Account{Name: "repl", Password: "r"}, Backup: mysql.Account{Name: "backup", Password: password}}))
	db := srv.RootDB(t)
	for _, st := range []string{"CREATE DATABASE app", "CREATE TABLE app.a (id INT PRIMARY KEY, v TEXT)",
		"CREATE TABLE app.b (id INT PRIMARY KEY, d DATE)", "INSERT INTO app.a VALUES (1, 'x'), (2, 'y')",
		"INSERT INTO app.b VALUES (1, '2026-01-01')"} {
		_, err := db.ExecContext(t.Context(), st)
		must(t, err)
	}
	wantSums, wantGTID, err := backuptest.Checksums(t.Context(), db)
	must(t, err)

	s3 := s3test.Start(t)
	m := backuptest.MysqldT(t)
	secrets := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(secrets, name)
		must(t, os.WriteFile(p, []byte(content+"\n"), 0o600))
		return p
	}
	store := backupjob.Store{Bucket: s3.Bucket, Path: "cmd", Endpoint: s3.Endpoint, Region: s3.Region,
		ForcePathStyle: true, AccessKeyIDFile: file("id", s3.AccessKey), SecretAccessKeyFile: file("secret", s3.SecretKey)}
	termLog := filepath.Join(secrets, "termination-log")
	direct, err := cmdbackup.OpenStore(store)
	must(t, err)
	_, err = direct.WriteClaim(t.Context(), "pc1", &objectstore.Claim{Cluster: "pc1", Namespace: "team-a", UID: "uid-a"}, "")
	must(t, err) // the operator claimed the location for the incarnation uid-a
	o := &cmdbackup.Options{Args: backupjob.Args{Cluster: "pc1", Namespace: "team-a", ClusterUID: "uid-a", BackupName: "b1", BackupID: "20260101T000000Z",
		Method: "clone", TargetHost: srv.Host, TargetPort: srv.Port, User: "backup", PasswordFile: file("password", password),
		CAFile: srv.TLS.CAFile, CertFile: srv.TLS.ClientCertFile, KeyFile: srv.TLS.ClientKeyFile,
		ScratchDir: backuptest.Scratch(t, m), TerminationLog: termLog, Store: store}, Mysqld: m}
	must(t, cmdbackup.Run(t.Context(), o))
	var res backupjob.Result
	b, err := os.ReadFile(termLog)
	must(t, err)
	must(t, json.Unmarshal(b, &res))
	if !strings.HasPrefix(res.Checksum, "sha256:") || res.Size == 0 || res.GTIDExecuted != wantGTID || res.Error != "" {
		t.Errorf("termination message %s", b)
	}

	t.Run("a second run of the same backup id is refused", func(t *testing.T) {
		o2 := *o
		o2.ScratchDir = backuptest.Scratch(t, m)
		if err := cmdbackup.Run(t.Context(), &o2); err == nil {
			t.Fatal("the same backup ran twice")
		}
		b, _ := os.ReadFile(termLog)
		if !strings.Contains(string(b), `"error"`) || strings.Contains(string(b), "S3cret") {
			t.Errorf("termination message %s", b)
		}
	})
	t.Run("a Job of an incarnation that does not hold the location writes nothing", func(t *testing.T) {
		for _, tc := range []struct{ dir, uid, want string }{
			{"pc1", "uid-b", "belongs to team-a/pc1 (uid uid-a)"},
			{"unclaimed", "uid-a", "has no marker yet"},
		} {
			o2 := *o
			o2.Cluster, o2.ClusterUID, o2.BackupID = tc.dir, tc.uid, "20260101T010000Z"
			o2.ScratchDir = backuptest.Scratch(t, m)
			err := cmdbackup.Run(t.Context(), &o2)
			if !errors.Is(err, cmdbackup.ErrLocationNotHeld) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s as %s: %v, want ErrLocationNotHeld saying %q", tc.dir, tc.uid, err, tc.want)
			}
			entries, lerr := direct.ListBackups(t.Context(), tc.dir)
			must(t, lerr)
			for _, e := range entries {
				if e.Ref.ID == o2.BackupID {
					t.Errorf("%s: the refused backup left %v", tc.dir, e.Keys)
				}
			}
		}
	})
	t.Run("restore gives the same tables and GTIDs", func(t *testing.T) {
		dataDir := filepath.Join(backuptest.Scratch(t, m), "data")
		ro := &cmdrestore.Options{Ref: objectstore.BackupRef{Cluster: "pc1", Name: "b1", ID: o.BackupID},
			DataDir: dataDir, Mysqld: m, Store: store}
		md, err := cmdrestore.Run(t.Context(), ro)
		must(t, err)
		if md.Checksum() != res.Checksum {
			t.Errorf("restored %s, backed up %s", md.Checksum(), res.Checksum)
		}
		if md.ClusterUID != "uid-a" {
			t.Errorf("metadata.json records the incarnation %q, want the --cluster-uid uid-a", md.ClusterUID)
		}
		if md.Namespace != "team-a" {
			t.Errorf("metadata.json records namespace %q, want the --namespace team-a", md.Namespace)
		}
		srv, err := localmysqld.Start(t.Context(), m, localmysqld.Options{DataDir: dataDir,
			RunDir: filepath.Join(filepath.Dir(dataDir), "check"), Args: []string{"--skip-grant-tables"}})
		must(t, err)
		sums, executed, err := backuptest.Checksums(t.Context(), srv.DB())
		must(t, srv.Shutdown())
		must(t, err)
		if !maps.Equal(sums, wantSums) || executed != wantGTID {
			t.Errorf("restored %v %s, want %v %s", sums, executed, wantSums, wantGTID)
		}
	})
}

// must is check.Must, the one way a test stops on an error it does not expect.
func must(t *testing.T, err error) {
	t.Helper()
	check.Must(t, err)
}
