// Package instance is the in-Pod instance manager: it renders my.cnf, supervises mysqld, and
// converges the instance's role to its Cluster's status.targetPrimary.
//
// It follows gather → decide → act: the I/O gathers a snapshot (the Cluster, the local server's
// status through internal/mysql), a pure function decides (DecideRole, DecideLeaseStep, semisync.PlanFor,
// RenderMyCnf), and the caller performs exactly that decision. The pure functions take no clock
// and no connection, so their tables are the specification.
package instance
