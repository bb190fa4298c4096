// Package s3test starts a real S3-compatible server, versitygw with its posix backend, on
// 127.0.0.1 for tests.
//
// The binary is $CNM_VERSITYGW, or
// ${XDG_CACHE_HOME:-$HOME/.cache}/cloudnative-mysql/bin/versitygw-v1.8.0/versitygw, as built by
// `bash hack/substrate.sh versitygw` (or `make test`).
//
// Each server has its own backend directory (a test temporary directory: every subdirectory is a
// bucket, objects are files below it, metadata lives in extended attributes, so the filesystem
// must support them), a free port, a random root access key and secret, passed through the
// environment rather than the command line and never logged, and one bucket created up front.
// SigV4 is enforced: wrong credentials are rejected.
//
// versitygw runs in its own process group; Close (registered with t.Cleanup by Start) stops it
// with SIGTERM, then SIGKILL after a timeout. If the test binary is killed, the kernel kills
// versitygw too (it is started with package proc, which ties a child to its parent).
package s3test
