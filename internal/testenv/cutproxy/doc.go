// Package cutproxy is a TCP proxy a test can cut and restore, to take a network path away for
// real (an instance manager from the API server, one instance from another) without a flag in
// the code under test.
package cutproxy
