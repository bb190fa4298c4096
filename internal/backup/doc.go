// Package backup produces physical snapshots of a MySQL instance and streams them to the object
// store.
//
// A Producer makes one snapshot stream and reports, once the stream ended, its byte count, its
// sha256 and the snapshot's coordinates (gtid_executed, binary log file and position, server
// version). Run hands that stream to objectstore.UploadBackup, whose own count and sha256 of the
// bytes it uploaded must equal the producer's before metadata.json is written: a stream that
// broke, a producer that exited with an error, or a mismatch never ends as a complete backup.
//
// Two methods implement Producer:
//
//   - clone: a private recipient mysqld in scratch space (localmysqld) runs CLONE INSTANCE FROM the
//     target over TLS with the backup account into a separate DATA DIRECTORY, so the recipient stays
//     up and its performance_schema.clone_status gives the coordinates of the copy; the recipient is
//     then shut down and the cloned directory is packed as tar + zstd (package archive).
//   - xtrabackup: `xtrabackup --backup --stream=xbstream` for Percona images, compressed with zstd
//     on the way; credentials go in a defaults file, never on its command line. It is built and
//     unit-tested here but cannot run in this repository's tests (no Percona binaries).
//
// Passwords reach mysqld as a statement argument over the recipient's Unix socket, and xtrabackup
// through a 0600 defaults file: never on a command line, in the environment or in a log line.
package backup
