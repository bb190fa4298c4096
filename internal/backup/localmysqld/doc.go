// Package localmysqld runs a private, short-lived mysqld next to the process that needs it: the
// clone recipient of a backup Job and the verification server of a restore. The server listens on
// a Unix socket in a scratch directory only (no TCP), is reached as root without a password over
// that socket, and is stopped before the caller returns.
//
// How mysqld is launched is injectable (Command): in a Pod it is the image's /usr/sbin/mysqld; in
// tests it is `chroot <rootfs> /usr/sbin/mysqld`, with host paths translated into the paths the
// chrooted server sees. No secret is ever put on a mysqld command line.
package localmysqld
