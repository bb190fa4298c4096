package verify_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/archive"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestVerification verifies real clone backups of a real mysqld in a real S3 server: a good
// backup passes with its figures, with and without an archive to replay; every kind of damage
// is reported with its reason; and no verification changes the object store or leaves scratch
// data behind (checked by every call of world.verify).
func TestVerification(t *testing.T) {
	w := newWorld(t)
	good := w.backup(t, "good")
	const budget = time.Minute

	t.Run("a good backup verifies: every table checked, rows counted, gtid_executed the backup's", func(t *testing.T) {
		res := w.verify(t, good, false, budget)
		if !res.Passed {
			t.Fatalf("verification failed: %s: %s", res.Reason, res.Message)
		}
		if res.Tables < 4 || res.TablesChecked != res.Tables {
			t.Errorf("checked %d of %d tables, want all of at least 4 (3 of shop and audit, and mysql's)", res.TablesChecked, res.Tables)
		}
		if res.Rows < 3*400 {
			t.Errorf("counted %d rows, the three tables alone hold %d", res.Rows, 3*400)
		}
		if !gtid.MustParse(res.GTIDExecuted).Equal(gtid.MustParse(good.GTIDExecuted)) {
			t.Errorf("gtid_executed %q, the backup records %q", res.GTIDExecuted, good.GTIDExecuted)
		}
		if res.Transactions != 0 || res.Segments != 0 {
			t.Errorf("replayed %d transactions from %d segments without an archive", res.Transactions, res.Segments)
		}
	})

	t.Run("when the budget runs out, a sample is checked and the result says so", func(t *testing.T) {
		res := w.verify(t, good, false, time.Nanosecond)
		if !res.Passed || res.TablesChecked != 1 || !res.Sampled() {
			t.Fatalf("got passed=%v, %d of %d tables checked; want a pass with one table checked", res.Passed, res.TablesChecked, res.Tables)
		}
	})

	t.Run("with an archive, the binlogs are replayed to the newest archived event", func(t *testing.T) {
		w.write(t, 400, 450)
		w.archive(t)
		want := w.executed(t)
		res := w.verify(t, good, true, budget)
		if !res.Passed {
			t.Fatalf("verification failed: %s: %s", res.Reason, res.Message)
		}
		if !gtid.MustParse(res.GTIDExecuted).Equal(gtid.MustParse(want)) {
			t.Errorf("gtid_executed %q after the replay, the archive ends at %q", res.GTIDExecuted, want)
		}
		if res.Transactions != 150 || res.Segments == 0 {
			t.Errorf("replayed %d transactions from %d segments, want the 150 written after the backup", res.Transactions, res.Segments)
		}
		if res.Rows < 3*450 {
			t.Errorf("counted %d rows after the replay, want at least %d", res.Rows, 3*450)
		}
	})

	archiveKey := objectstore.ArchiveKey(prefix, good.Ref(), archive.Extension)
	for _, tc := range []struct {
		rule    string
		damage  func(t *testing.T)
		reasons []string
		says    string
	}{
		{
			rule: "a byte of the archive flipped: the sha256 or the decompressor catches it",
			damage: func(t *testing.T) {
				w.tamper(t, archiveKey, func(b []byte) []byte { b[len(b)/2] ^= 0x5a; return b })
			},
			// Which one depends on where the byte falls: zstd checks its blocks as it reads, the
			// sha256 is compared at the end of the stream.
			reasons: []string{v1alpha1.ReasonVerificationChecksum, v1alpha1.ReasonVerificationCorrupt},
		},
		{
			rule: "a truncated archive: its size and sha256 differ from metadata.json",
			damage: func(t *testing.T) {
				w.tamper(t, archiveKey, func(b []byte) []byte { return b[:len(b)*2/3] })
			},
			reasons: []string{v1alpha1.ReasonVerificationChecksum, v1alpha1.ReasonVerificationCorrupt},
		},
		{
			rule: "metadata.json records another gtid_executed than the data holds",
			damage: func(t *testing.T) {
				w.editMetadata(t, good, func(m map[string]any) {
					m["gtidExecuted"] = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-7," + good.GTIDExecuted
				})
			},
			reasons: []string{v1alpha1.ReasonVerificationGTID},
			says:    "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-7",
		},
		{
			rule: "a table corrupted inside the archive, its sha256 and size recomputed: CHECK TABLE catches it",
			damage: func(t *testing.T) {
				w.repack(t, good, func(dir string) { corruptPages(t, filepath.Join(dir, "shop", "orders.ibd")) })
			},
			reasons: []string{v1alpha1.ReasonVerificationTable},
			says:    "orders",
		},
		{
			rule: "the data dictionary missing from the archive, checksums recomputed: mysqld refuses to start",
			damage: func(t *testing.T) {
				w.repack(t, good, func(dir string) { check.Must(t, os.Remove(filepath.Join(dir, "mysql.ibd"))) })
			},
			reasons: []string{v1alpha1.ReasonVerificationStart},
		},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			tc.damage(t)
			res := w.verify(t, good, false, budget)
			failedWith(t, res, tc.reasons, tc.says)
		})
	}

	t.Run("a segment of the archive damaged: the replay fails and says so", func(t *testing.T) {
		index, _, err := w.store.ReadIndex(t.Context(), cluster)
		check.Must(t, err)
		last := index.Segments[len(index.Segments)-1]
		w.tamper(t, objectstore.BinlogKey(prefix, cluster, last.Name), func(b []byte) []byte { b[len(b)/2] ^= 0x5a; return b })
		res := w.verify(t, good, true, budget)
		failedWith(t, res, []string{v1alpha1.ReasonVerificationReplay}, last.Name)
	})
}

// failedWith checks that res failed with one of reasons, saying says.
func failedWith(t *testing.T, res backupjob.VerifyResult, reasons []string, says string) {
	t.Helper()
	if res.Passed {
		t.Fatalf("the verification of a damaged backup passed: %+v", res)
	}
	if !slices.Contains(reasons, res.Reason) {
		t.Errorf("reason %s, want one of %v: %s", res.Reason, reasons, res.Message)
	}
	if !strings.Contains(res.Message, says) {
		t.Errorf("the message does not say %q: %s", says, res.Message)
	}
}

// corruptPages overwrites the middle of every page after the first three of an InnoDB file
// (its data and index pages) with garbage, leaving the file's size.
func corruptPages(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	check.Must(t, err)
	const page = 16 << 10
	if len(b) < 5*page {
		t.Fatalf("%s holds %d bytes, fewer than 5 pages", path, len(b))
	}
	for off := 3 * page; off+page <= len(b); off += page {
		for i := off + page/4; i < off+page/2; i++ {
			b[i] ^= 0xa5
		}
	}
	check.Must(t, os.WriteFile(path, b, 0o640))
}
