// Package binlogarchive archives the binary logs of the primary to the object store: every
// closed binlog is uploaded (bytes first, then its entry in the cluster's _index.json by a
// conditional write), the open binlog is rotated once its oldest transaction is older than the
// archive timeout, and a local binlog is purged only after it is archived.
//
// Decide is the pure core (what to upload, rotate and purge, or why to stand down); Archiver
// gathers an Observation from mysqld, the binlog files and the index, and acts on the Decision.
package binlogarchive
