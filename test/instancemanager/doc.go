// Package instancemanager tests `manager instance run` end to end: three manager processes, each
// supervising its own real mysqld, against a real API server, with the test playing the operator.
package instancemanager
