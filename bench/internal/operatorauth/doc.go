// Package operatorauth gives a benchmark the operator's production identity on a test API
// server: its namespace and ServiceAccount, the ClusterRoles and bindings of config/rbac, and
// bearer tokens from the TokenRequest API, for the operator and for a scraper of its metrics.
package operatorauth
