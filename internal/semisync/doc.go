// Package semisync plans semi-synchronous replication for a whole Cluster: how many replica
// acknowledgements the primary waits for, which replicas send them, and what each instance
// applies. It is pure (no connection, no clock): the operator's Cluster controller plans the
// runtime acknowledgement count and the participants (the replicas that acknowledge) from the
// instances' reports, and the instance manager converges its own server's settings from the
// spec and from what the operator told it (Participation); both use this one plan. Applying the
// settings to a server is internal/instance's part.
package semisync
