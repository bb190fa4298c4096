package cutproxy

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// echo serves a line echo on a free port.
func echo(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends a line on a new connection and reads the answer within timeout.
func roundTrip(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	_, err = bufio.NewReader(c).ReadString('\n')
	return err
}

func TestProxyCutAndRestore(t *testing.T) {
	p := Start(t, "127.0.0.1:0", echo(t))
	if err := roundTrip(p.Addr(), 2*time.Second); err != nil {
		t.Fatalf("before the cut: %v", err)
	}
	open, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if _, err := open.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(open).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	p.Cut()
	_ = open.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := open.Read(make([]byte, 1)); err == nil {
		t.Error("an open connection survived the cut")
	}
	if err := roundTrip(p.Addr(), 300*time.Millisecond); err == nil {
		t.Error("a new connection was answered during the cut")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Errorf("during the cut a new connection failed with %v, want a timeout (held, unanswered)", err)
	}
	p.Restore()
	if err := roundTrip(p.Addr(), 2*time.Second); err != nil {
		t.Errorf("after Restore: %v", err)
	}
}

func TestProxyStall(t *testing.T) {
	p := Start(t, "127.0.0.1:0", echo(t))
	open, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	r := bufio.NewReader(open)
	if _, err := open.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	p.Stall()
	// The open connection stays open: a write succeeds, but no answer comes, and no error either.
	if _, err := open.Write([]byte("during\n")); err != nil {
		t.Fatalf("a write on a stalled connection failed: %v (a silent partition accepts it)", err)
	}
	_ = open.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := r.ReadString('\n'); err == nil {
		t.Error("an answer passed the stall")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Errorf("the stalled connection failed with %v, want a read timeout (open, quiet)", err)
	}
	if err := roundTrip(p.Addr(), 300*time.Millisecond); err == nil {
		t.Error("a new connection was answered during the stall")
	}
	p.Restore()
	if err := roundTrip(p.Addr(), 2*time.Second); err != nil {
		t.Errorf("after the restore: %v", err)
	}
}

// TestProxyStallAfter: an answer is cut off after the budget, byte-exact, and the connection
// then stays open and quiet until Restore.
func TestProxyStallAfter(t *testing.T) {
	p := Start(t, "127.0.0.1:0", echo(t))
	open, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	p.StallAfter(4)
	if _, err := open.Write([]byte("abcdefgh\n")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 0, 16)
	buf := make([]byte, 16)
	_ = open.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	for {
		n, err := open.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				t.Errorf("the cut-off connection failed with %v, want a read timeout (open, quiet)", err)
			}
			break
		}
	}
	if string(got) != "abcd" {
		t.Errorf("received %q, want the first 4 bytes of the answer", got)
	}
	if err := roundTrip(p.Addr(), 300*time.Millisecond); err == nil {
		t.Error("a new connection was answered after the budget was spent")
	}
	p.Restore()
	if err := roundTrip(p.Addr(), 2*time.Second); err != nil {
		t.Errorf("after the restore: %v", err)
	}
}
