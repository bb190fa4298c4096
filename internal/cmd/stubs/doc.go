// Package stubs holds the manager subcommands whose data paths are not in this release yet
// (instance run). Each is wired so the CLI shape is stable and fails loudly with
// a clear message instead of pretending to work.
package stubs
