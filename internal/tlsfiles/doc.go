// Package tlsfiles loads the TLS material of a mounted kubernetes.io/tls Secret (ca.crt, tls.crt,
// tls.key) and keeps following it: the kubelet replaces a mounted Secret's files (through an
// atomic symlink swap) when the operator renews a certificate or rolls the CA, and a process that
// read them once would present an expired certificate after the leaf's 90 days. Servers and
// clients built here re-read the files at most every Interval, keyed by a hash of their content,
// so a renewal is picked up by the next handshake without a restart.
package tlsfiles
