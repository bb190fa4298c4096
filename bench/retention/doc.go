// Command retention measures one retention pass (internal/retentionpass) over a large
// inventory in a real S3 server: it seeds versitygw with base backups (a small archive and its
// metadata.json each) and archived binlog segments listed in _index.json, about half of each
// past a 30-day window, then runs one pass in a child process through a counting proxy and
// prints the pass's wall time, the S3 requests by type, the child's peak RSS, and what was
// deleted and kept, checked against the store afterwards. See README.md.
package main
