// Package retentionpass performs one retention pass of a cluster on its object store: it
// gathers the inventory (complete and incomplete backup directories, the binlog index), asks the
// retention planner what to delete, deletes expired backup directories and uncoverable binlog
// segments, and rewrites _index.json last, through a conditional write, so that a pass cut short
// leaves a valid index and the next pass finishes the job.
package retentionpass
