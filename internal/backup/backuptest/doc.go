// Package backuptest holds what the backup, restore and backup-command tests share: the mysqld
// command chrooted into the MySQL root filesystem of mysqldtest, scratch directories inside that
// root filesystem (so the chrooted mysqld sees them), an object store client for a versitygw
// server, and table checksums to compare a source with its restore.
package backuptest
