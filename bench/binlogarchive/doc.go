// Command binlogarchive benchmarks the continuous binlog archiver against a real mysqld and a
// real S3 (versitygw): a single writer commits at a steady rate while the archiver runs with the
// given archive timeout; for every transaction, the lag is the time from its commit to the moment
// its segment is listed in _index.json (polled every 50 ms). It prints the lag p50, p99 and max.
// It is not part of the tests. Run it from the repository root after
// `eval "$(bash hack/substrate.sh env)"`:
//
//	go run ./bench/binlogarchive -duration 60s -rate 200 -archive-timeout 3s
package main
