// Command backup benchmarks the clone backup data path against the raw tools on the same data
// directory and the same S3 server, in the same run:
//
//   - backup: `manager backup`'s streaming stage (tar + zstd of the cloned directory into a
//     verified multipart upload, metadata.json last) against `tar -cf - DIR | zstd -3` piped into
//     a plain minio-go multipart upload; and the whole clone backup (recipient, CLONE, settle,
//     stream) for reference;
//   - restore: the verified download and unpack (and the full restore, with its mysqld start to
//     check gtid_executed) against a plain download piped into `zstd -d | tar -xf -`;
//   - the peak RSS (VmHWM) of the backup process, run as a child process, at each size.
//
// It needs root and the substrate of the tests (the MySQL root filesystem, versitygw, the zstd
// and tar commands). It is not part of `make test`: run `go run ./bench/backup -sizes 1,5`.
// Figures are printed as a table; MB/s are data-directory megabytes (10^6 bytes) per second.
package main
