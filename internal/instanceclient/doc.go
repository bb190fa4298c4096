// Package instanceclient is the operator's client for the instance manager's control API: HTTP
// JSON over mutual TLS on the manager port, the operator presenting its client certificate and
// verifying the instance's server certificate against the cluster CA. Every call has a deadline,
// so an instance that does not answer costs a bounded wait and a clear ErrUnreachable.
package instanceclient
