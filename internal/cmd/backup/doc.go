// Package backup is `manager backup`, the data path of a backup Job: it takes one physical
// backup of the target instance with the chosen method and streams it to the object store.
//
// Everything it needs comes from flags; every secret (the backup account's password, the object
// store credentials, the endpoint CA) is read from a file path given by a flag, as mounted from
// a Secret, so no secret is on a command line or in the environment. It reports its outcome as
// the container's termination message (a small JSON backupjob.Result), which the Backup controller reads
// to explain a failure; the controller marks a Backup completed only after the Job succeeded and
// it has read the backup's metadata.json itself.
package backup
