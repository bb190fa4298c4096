// Package verify proves that a backup restores: it restores it into scratch storage with the
// project's verified restore (size and sha256 of the archive, mysqld started, gtid_executed equal
// to metadata.json), replays the binlog archive onto it up to the newest archived event when
// there is one (gtid_executed equal to the archive's end), then runs CHECK TABLE on every table
// and counts its rows, within a time budget (a sample that starts at a different table for each
// backup when the budget runs out).
//
// It reads the object store through a Store that refuses every write, so a verification never
// deletes or changes a backup, and removes everything it put in the scratch directory. Result
// says what passed, or which step failed and why, as the reasons of the Backup's Verified
// condition.
package verify
