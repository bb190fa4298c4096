// Package restore rebuilds a data directory from a backup in the object store.
//
// Restore refuses a data directory that is not empty, streams the archive through a reader that
// verifies its size and sha256 against metadata.json while unpacking, and on any mismatch or
// error removes everything it extracted: a restore either yields the backed-up data directory or
// leaves an empty one. It then starts mysqld on the result (a private server on a Unix socket,
// with --skip-grant-tables so no credential is needed, which also keeps it off the network),
// checks that gtid_executed equals the GTID set metadata.json records, and stops it.
//
// Only the clone method's archives (tar + zstd) are restorable here; an xtrabackup archive
// (xbstream) needs xbstream and `xtrabackup --prepare` from a Percona image and is refused.
package restore
