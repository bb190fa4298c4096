// Package verify is `manager verify`, the command of a verification Job: it verifies one backup
// (internal/verify) and writes the result as the container's termination message.
package verify
