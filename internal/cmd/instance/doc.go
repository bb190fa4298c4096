// Package instance is `manager instance run`, PID 1 of an instance Pod: it reads its identity and
// paths from flags and the environment the Pod gives it and hands them to internal/instance.
package instance
