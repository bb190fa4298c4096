// Package proc starts child processes tied to the process that starts them: in their own process
// group, and killed by the kernel (SIGKILL) the moment their parent dies, even by SIGKILL, so
// that no mysqld, versitygw or controller manager outlives a crashed instance manager, test
// binary or benchmark.
//
// The kernel's parent-death signal (Pdeathsig) fires when the OS thread that forked the child
// exits, not when the process does, and the Go runtime ends threads freely. StartTied therefore
// starts and waits for the child on a goroutine that keeps its OS thread locked until the child
// has exited. Setting Pdeathsig without that lock, as exec.Cmd alone allows, may kill the child
// at a random moment; start every child through this package instead: StartTied, or Run for one
// that runs to completion. Output collects a child's output for logs and error messages.
//
// The init process of a PID namespace (the instance manager in its container) sets no
// parent-death signal: the kernel ends the namespace's processes with it anyway, and it may
// then replace its own program (Reexec) and take its running children back (Adopt) without
// killing them, as an in-place update of the instance manager does with mysqld.
package proc
