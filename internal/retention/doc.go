// Package retention decides which base backups and archived binlog segments a retention pass
// deletes. It is pure: the caller gathers the inventory from the object store, asks Decide for a
// Plan, and performs it. Nothing here does I/O or reads a clock.
package retention
