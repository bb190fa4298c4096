// Package restore is `manager restore`: it rebuilds an empty data directory from a backup in the
// object store, verifying the archive's sha256 against metadata.json and the restored server's
// gtid_executed against the one recorded, and refuses a data directory that is not empty.
package restore
