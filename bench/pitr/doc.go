// Command pitr measures the point-in-time replay against the stock pipeline, in the same run and
// on the same segments: a real mysqld is backed up (clone) and then written to while the real
// archiver uploads its binlogs to a real S3 (versitygw); the base backup is then restored twice,
// once carried to the latest archived transaction by pitr.Replay (download, sha256 checks,
// private server start and stop, mysqlbinlog | mysql, gtid_executed check: all timed), once by
// `mysqlbinlog <segments> | mysql` alone on a server already started (only the pipeline timed).
// It prints both and the speed ratio (target >= 0.9). It is not part of the tests. Run it from
// the repository root after `eval "$(bash hack/substrate.sh env)"`:
//
//	go run ./bench/pitr -duration 30s -rounds 2
package main
