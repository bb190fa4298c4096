// Package admission holds the tests that send Clusters, Backups and ScheduledBackups to the real
// API server with this project's CRDs installed, proving what the schema and its CEL rules accept,
// reject (with which message) and default.
package admission
