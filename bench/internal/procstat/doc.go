// Package procstat reads the CPU time of processes and of the machine from /proc, for the
// benchmarks that report what a process cost over a window.
package procstat
