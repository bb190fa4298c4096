package instance

import (
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
)

// TestListeningSocketsHandOver: a socket handed over (a duplicate without close-on-exec, named in
// listenFDsEnv) is the one the next program serves on, and a connection made while the previous
// program's own socket is already closed waits in its backlog and is accepted.
func TestListeningSocketsHandOver(t *testing.T) {
	prev := &listeningSockets{inherited: map[string]net.Listener{}, open: map[string]*net.TCPListener{}}
	ln, err := prev.listen("control", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	syscall.ForkLock.Lock()
	fds, _, err := prev.handOver() // the next program takes the duplicates (inheritedSockets)
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	_ = ln.Close() // execve closes the previous program's own (close-on-exec) descriptor
	var fd int
	if _, err := fmt.Sscanf(fds, "control=%d", &fd); err != nil {
		t.Fatalf("handed over %q: %v", fds, err)
	}
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC != 0 {
		t.Fatalf("the handed-over descriptor %d has flags %d (%v): it would be closed by execve", fd, flags, err)
	}
	conn, err := net.Dial("tcp", addr) // made before the next program listens: waits in the backlog
	if err != nil {
		t.Fatalf("connecting while no program serves: %v", err)
	}
	defer conn.Close()

	t.Setenv(listenFDsEnv, fds)
	next := inheritedSockets(logr.Discard())
	if _, err := next.listen("probes", "127.0.0.1:0"); err != nil { // not handed over: listens anew
		t.Fatal(err)
	}
	got, err := next.listen("control", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.Addr().String() != addr {
		t.Fatalf("the next program listens on %s, want the inherited %s", got.Addr(), addr)
	}
	accepted, err := got.Accept()
	if err != nil {
		t.Fatalf("accepting the connection made meanwhile: %v", err)
	}
	accepted.Close()
}

func TestAnInheritedSocketForAnotherAddressIsNotUsed(t *testing.T) {
	prev := &listeningSockets{inherited: map[string]net.Listener{}, open: map[string]*net.TCPListener{}}
	ln, err := prev.listen("control", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	syscall.ForkLock.Lock()
	fds, _, err := prev.handOver() // the next program takes the duplicates (inheritedSockets)
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(listenFDsEnv, fds)
	next := inheritedSockets(logr.Discard())
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	got, err := next.listen("control", net.JoinHostPort("127.0.0.2", port)) // the same port, another host
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.Addr().String() == ln.Addr().String() {
		t.Fatalf("served on the inherited %s although the address is now 127.0.0.2", got.Addr())
	}
}

func TestSameListenAddress(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		same      bool
	}{
		{"[::]:8000", ":8000", true},
		{"0.0.0.0:8000", ":8000", true},
		{"127.0.0.1:8000", "127.0.0.1:8000", true},
		{"[::]:8000", ":8001", false},
		{"127.0.0.1:8000", ":8000", false},
	} {
		if got := sameListenAddress(tc.got, tc.want); got != tc.same {
			t.Errorf("sameListenAddress(%q, %q) = %v, want %v", tc.got, tc.want, got, tc.same)
		}
	}
}

// TestHandedOverSocketsStayNonBlocking: handing the sockets over leaves the listeners as they
// were (a failed execve must not leave the control API's accept blocking in the kernel), and the
// duplicates are closed by the closer.
func TestHandedOverSocketsStayNonBlocking(t *testing.T) {
	s := &listeningSockets{inherited: map[string]net.Listener{}, open: map[string]*net.TCPListener{}}
	ln, err := s.listen("control", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	syscall.ForkLock.Lock()
	fds, closeFDs, err := s.handOver()
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	if _, err := fmt.Sscanf(fds, "control=%d", &fd); err != nil {
		t.Fatalf("handed over %q: %v", fds, err)
	}
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC != 0 {
		t.Fatalf("the duplicate %d has flags %d (%v): execve would close it", fd, flags, err)
	}
	closeFDs()
	raw, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	_ = raw.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) })
	if err != nil || flags&unix.O_NONBLOCK == 0 {
		t.Fatalf("the listener's flags are %#x (%v): no longer non-blocking", flags, err)
	}
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if c != nil {
			c.Close()
		}
		done <- err
	}()
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
	}
	if err := <-done; err != nil {
		t.Fatalf("accepting after the handover: %v", err)
	}
}
