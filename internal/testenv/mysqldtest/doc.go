// Package mysqldtest starts real, independent mysqld servers for tests.
//
// The servers run from the MySQL root filesystem that `bash hack/substrate.sh mysql` (or `make
// test`) builds: a Debian minbase tree holding mysqld, the mysql client and the server plugins. Its
// location is $CNM_MYSQL_ROOTFS, or ${XDG_CACHE_HOME:-$HOME/.cache}/cloudnative-mysql/mysql-rootfs/v1.
// mysqld runs chrooted into that tree, so the tests must run as root.
//
// Each server gets a fresh directory <rootfs>/tmp/cnm-test/<pid>-<random>/ holding its data
// directory, its socket, pid file and logs, and its TLS material. Paths in the Server fields are
// host paths; Server.InChroot translates one into the path mysqld sees, for statements such as
// CHANGE REPLICATION SOURCE TO ... SOURCE_SSL_CA='...'.
//
// A server is configured for replication and clone tests: GTIDs on, binary log on, a unique
// server_id, --skip-name-resolve, the clone plugin loaded with --plugin-load-add (the semi-sync
// plugins are present and can be loaded with INSTALL PLUGIN; do not also add them with
// --plugin-load-add), TLS with a certificate authority shared by the servers started together.
// Memory is kept small: a 32 MiB buffer pool and performance_schema off. Tests that read
// performance_schema tables (replication status, clone_status) pass "--performance-schema=ON"
// in Options.ExtraArgs; later options override earlier ones.
//
// A root@127.0.0.1 account with an empty password and every privilege is created when the data
// directory is initialized, next to the root@localhost one. Initialization takes ~5 s, so it is
// done once into a template under <rootfs>/tmp/cnm-template/ and each server starts from a copy
// (without auto.cnf, so every server has its own server_uuid).
//
// Servers bind distinct loopback addresses 127.0.0.x with a free port; clients connecting to
// them still come from 127.0.0.1. The server certificate names that address, localhost and
// 127.0.0.1; Server.TLSConfig verifies it and presents a client certificate from the same CA.
//
// Process hygiene: mysqld runs in its own process group and is stopped (SIGTERM, then SIGKILL
// after a timeout) by Server.Close, which Start registers with t.Cleanup. If the test binary itself
// is killed, the kernel delivers SIGKILL to mysqld: it is started with package proc, which ties
// a child to its parent. The directories of test binaries that died are removed the next time a
// server is started.
package mysqldtest
