// Package certs issues and checks the TLS material of a Cluster: a self-signed cluster CA,
// per-instance server certificates whose SANs cover every name clients use, and client
// certificates for the operator and the replication user. It is pure apart from drawing keys and
// serial numbers from crypto/rand: time is always a parameter, so renewal is tested with any clock.
package certs
