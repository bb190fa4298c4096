// Package probes serves the kubelet's probes of an instance (startup, liveness, readiness) on the
// instance manager's plain-HTTP probe port.
//
// The port has no authentication and anyone who reaches the Pod may flood it, so no request runs
// SQL: one StatusPoller goroutine asks mysqld for its status at a fixed rate over one connection,
// and every request answers from the newest Observation, in memory, without waiting on the others.
// An observation older than MaxStaleness counts as no answer, so a mysqld whose status query hangs
// is reported as not answering within that bound. Bodies carry a short fixed reason; the detail
// (the driver's or the server's error text) is logged by the poller, never sent.
package probes
