// Package archive packs a data directory into a zstd-compressed tar stream and unpacks one into an
// empty directory.
//
// Packing walks the directory in lexical order and stores directories and regular files only;
// anything else (a symlink, a socket) fails the backup rather than being silently skipped.
// Unpacking refuses absolute names, ".." components, links and special files, creates every file
// exclusively (never overwriting), and reads its input to the end, so that a verifying reader
// (objectstore.OpenBackup) gets to check the checksum before the caller trusts the result. Both
// run in bounded memory whatever the size of the directory.
package archive
