// Package objectstore keeps physical backups and archived binary logs in an S3-compatible bucket.
//
// Layout, under the configured path prefix (which may be empty):
//
//	<path>/<cluster>/<backup-name>/<backup-id>/backup.<ext>   the archive
//	<path>/<cluster>/<backup-name>/<backup-id>/metadata.json  written last: no metadata, no backup
//	<path>/<cluster>/binlogs/<segment>                         archived binary logs
//	<path>/<cluster>/binlogs/_index.json                       the binlog index
//
// A backup is complete exactly when its metadata.json exists. UploadBackup streams an archive of
// unknown length as a multipart upload holding at most two parts in memory, hashes it on the
// way, and writes metadata.json only once the upload is complete and its byte count and sha256
// equal what the producer reports; on any failure it aborts the multipart upload and removes
// whatever it wrote, so a failed upload leaves neither metadata.json nor an open multipart
// upload. Readers verify the archive's sha256 against metadata.json and refuse a mismatch.
//
// The binlog index has several writers (the in-Pod archiver, the retention pass): every rewrite
// is conditional on the ETag that was read (If-Match, or If-None-Match: * to create it), and
// UpdateIndex retries on conflict, so no update is lost.
//
// Retention deletes in bulk (S3 DeleteObjects): DeleteBackupDirs removes every metadata.json of
// the directories it is given before any of their archives, and counts an object deleted only
// when the server's answer names it; DeleteSegments removes segment objects and leaves the index
// to the caller, who removes exactly those from it with UpdateIndex. ListBackupUploads and
// AbortBackupUploads clean up multipart uploads that were never completed nor aborted.
//
// Configuration comes from a Cluster's spec.backup.objectStore: ResolveConfig is a pure function
// of that and the Secret values ReadSecrets fetched. Credentials never appear in errors or logs:
// Credentials formats as "[redacted]" whatever the verb.
//
// NewGuarded builds a Client whose every connection a Control may refuse, at dial time, by the
// address being connected to: the operator opens the object stores users name that way
// (internal/egress). minio-go follows no redirect; a redirect answer is an error.
//
// Callers depend on the Store interface; Client implements it with minio-go. Its tests run
// against a real S3 server (versitygw), through a fault-injecting proxy where they test failures.
package objectstore
