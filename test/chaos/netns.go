package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// NodeNetns is the network namespace of the local node (hack/localcluster.sh).
const NodeNetns = "/run/netns/cnm-node"

// NetnsDialer dials TCP from inside a network namespace: each dial runs on an OS thread of its own
// that joins the namespace first, so the socket is created there; the thread is discarded after
// the dial (it is never unlocked), and the connection keeps working from any goroutine.
type NetnsDialer struct {
	// Path of the namespace's nsfs file, e.g. NodeNetns.
	Path string
	net.Dialer
}

// DialContext implements the go-sql-driver/mysql DialContextFunc shape and net.Dialer's.
func (d *NetnsDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := joinNetns(d.Path); err != nil {
			ch <- result{err: err}
			return
		}
		c, err := d.Dialer.DialContext(ctx, network, addr)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

func joinNetns(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening network namespace %s: %w", path, err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("joining network namespace %s: %w", path, err)
	}
	return nil
}
