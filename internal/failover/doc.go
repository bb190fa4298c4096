// Package failover decides, from one observation of a Cluster, the single next step of its
// high-availability machinery: nothing, wait until a time (and why), a step of a planned
// switchover, a step of an automatic failover, or blocked (and why). It is the pure heart the
// Cluster controller calls between gathering (Pods, the primary Lease, each instance's status
// read over the instance manager's mTLS control API) and acting.
//
// Everything here is pure: no I/O, no clock. The caller passes the current time in
// Observation.Now, and Decide returns the same Decision for the same Observation. Every step is
// small and idempotent, so a controller that crashes between two steps, or acts on a stale
// observation, repeats a step rather than skipping one.
//
// The safety rules, in order of importance:
//   - At most one instance accepts writes: a replica is promoted only after the old primary has
//     been seen read-only, or its primary Lease has expired (TTL counted from its last renewal;
//     a primary that cannot renew sets super_read_only itself before that, see LeaseTTL). An
//     unreachable primary is never taken as a stopped one.
//   - No transaction held by a healthy replica is lost: the candidate of a failover contains the
//     history (executed and retrieved GTIDs) of every other replica seen, and applies its relay
//     log before it is promoted; every replica's IO thread from the old primary is stopped first,
//     so the old primary can no longer collect semi-sync acknowledgements for writes the
//     candidate would not have. With semi-sync on, nothing is promoted while a replica that is
//     neither fenced nor diverged did not answer, whatever its Pod's state: it may be the only
//     participant holding an acknowledged write (UnseenParticipant).
//   - When GTID histories diverge, or no candidate is safe, nothing is promoted: the decision is
//     blocked, with the reason, for a human.
//
// The helpers around Decide are pure as well: SelectCandidate, UnseenParticipant, RoleLabels, CheckRejoin,
// LeaseExpired and the Lease timing constants, LeaseRenewalDue and LeaseRenewalOverdue (when the
// controller looks at a primary whose renewal did not come, and asks it with a short timeout),
// and Conditions (Ready, Progressing, Degraded).
// docs/replication-failover.md describes the algorithm step by step for users.
package failover
