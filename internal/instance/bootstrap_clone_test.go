package instance

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// testCloneBootstrap clones a donor holding data into the supervised server reached with cfg,
// whose directory is host (inside: the path mysqld sees); the supervisor restarts it.
func testCloneBootstrap(t *testing.T, host, inside string, cfg *driver.Config) {
	t.Helper()
	donor := mysqldtest.Start(t, mysqldtest.Options{})[0]
	ddb := donor.RootDB(t)
	for _, stmt := range []string{
		"CREATE USER cnm_backup IDENTIFIED BY 'backup-pw' REQUIRE X509", "GRANT BACKUP_ADMIN ON *.* TO cnm_backup",
		"CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1), (2)",
	} {
		if _, err := ddb.ExecContext(t.Context(), stmt); err != nil {
			t.Fatalf("donor: %s: %v", stmt, err)
		}
	}
	var donorSet string
	if err := ddb.QueryRowContext(t.Context(), "SELECT @@GLOBAL.gtid_executed").Scan(&donorSet); err != nil {
		t.Fatal(err)
	}
	// The recipient presents a client certificate from the donor's CA.
	for name, data := range map[string][]byte{"donor-ca.pem": donor.TLS.CAPEM,
		"client-cert.pem": donor.TLS.ClientCertPEM, "client-key.pem": donor.TLS.ClientKeyPEM} {
		if err := os.WriteFile(filepath.Join(host, "tls", name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	op, err := mysql.NewFactory().New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	before, err := op.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	cloned, err := CloneFromDonor(t.Context(), op, mysql.Donor{
		Host: donor.Host, Port: donor.Port, User: "cnm_backup", Password: "backup-pw",
		CAFile: inside + "/tls/donor-ca.pem", CertFile: inside + "/tls/client-cert.pem", KeyFile: inside + "/tls/client-key.pem",
	}, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cloned and restarted by the supervisor in %s", time.Since(begin).Round(time.Millisecond))
	after, err := op.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cloned.String() != donorSet || after.ServerUUID != before.ServerUUID || !after.SuperReadOnly {
		t.Errorf("after the clone: gtid %q (donor %q), uuid %s (was %s), super_read_only %v",
			cloned, donorSet, after.ServerUUID, before.ServerUUID, after.SuperReadOnly)
	}
}
