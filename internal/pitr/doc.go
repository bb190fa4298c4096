// Package pitr carries a restored base backup to a point in time: it replays the archived binlog
// segments up to a target (a time, a GTID set, or everything archived).
//
// The decisions are pure and table-tested: which base backup (ChooseBase, CheckBase), which
// segments in which order and whether they chain without a gap from the base backup's
// gtid_executed (PlanReplay), and, for a time target, which transactions committed at or before
// it (CutAtTime). The I/O follows them: every planned segment is downloaded and checked against
// its size and sha256 in _index.json, a time target is turned into a GTID set by reading the
// segments' GTID events, the transactions are applied with the image's own `mysqlbinlog | mysql`
// by a private mysqld, and the resulting gtid_executed must equal the set the plan expects, so
// a replay that applied nothing, or too much, fails loudly.
package pitr
