package cutproxy

import (
	"errors"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections from its listener to a target. Cut closes every connection and
// holds the new ones open without forwarding a byte (a black hole: the client waits for its own
// timeout) until Restore, which closes the held ones and forwards again. Stall is the silent
// partition: open connections stay open but no byte passes either way, so each end sees a live
// connection whose peer has gone quiet, as when a network drops packets instead of refusing them.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
	// flow is closed while bytes may pass; Stall replaces it with an open channel.
	flow chan struct{}
	// budget, while limited, is how many more bytes may pass from the target before the proxy
	// stalls (StallAfter).
	budget  int
	limited bool
}

// Start listens on listenAddr (host:0 picks a port) and forwards to target; the proxy closes at
// the end of the test.
func Start(t testing.TB, listenAddr, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", listenAddr)
	if err != nil {
		t.Fatalf("cutproxy: listening on %s: %v", listenAddr, err)
	}
	flow := make(chan struct{})
	close(flow)
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}, flow: flow}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut takes the path away: open connections are closed, new ones are held without an answer.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.closeAllLocked()
}

// Stall takes the path away silently: open connections stay open and pass nothing, new ones are
// held without an answer.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	select {
	case <-p.flow:
		p.flow = make(chan struct{})
	default: // already stalled
	}
}

// StallAfter lets n more bytes pass from the target to the clients, then stalls as Stall does:
// an answer cut off in the middle, as when a network starts dropping packets during a transfer.
func (p *Proxy) StallAfter(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.budget, p.limited = n, true
}

// take returns how many of n bytes from the target may pass now, and stalls the proxy once the
// budget of StallAfter is spent.
func (p *Proxy) take(n int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.limited {
		return n
	}
	k := min(n, p.budget)
	p.budget -= k
	if p.budget == 0 {
		p.limited, p.cut = false, true
		select {
		case <-p.flow:
			p.flow = make(chan struct{})
		default:
		}
	}
	return k
}

// Restore gives the path back: held and stalled connections are closed (their clients
// reconnect), new ones are forwarded.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut, p.limited = false, false
	p.closeAllLocked()
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	p.closeAllLocked()
	p.mu.Unlock()
	p.wg.Wait()
}

// closeAllLocked closes every connection and lets bytes flow again: a copy waiting for the flow
// then finds its connections closed and ends.
func (p *Proxy) closeAllLocked() {
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
	select {
	case <-p.flow:
	default:
		close(p.flow)
	}
}

// waitFlow returns once bytes may pass.
func (p *Proxy) waitFlow() {
	p.mu.Lock()
	flow := p.flow
	p.mu.Unlock()
	<-flow
}

// pipe copies src to dst, holding every byte while the proxy is stalled, until either fails;
// fromTarget counts the bytes against the budget of StallAfter (those not let through are
// dropped: the connection is closed before anything passes again).
func (p *Proxy) pipe(dst, src net.Conn, fromTarget bool) {
	buf := make([]byte, 32<<10)
	for {
		p.waitFlow()
		n, err := src.Read(buf)
		if n > 0 {
			p.waitFlow()
			if fromTarget {
				n = p.take(n)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		p.mu.Lock()
		p.conns[c] = struct{}{}
		cut := p.cut
		p.mu.Unlock()
		if cut {
			continue // held, unanswered, until Restore or Close closes it
		}
		p.wg.Add(1)
		go p.forward(c)
	}
}

// forward copies both ways until either side closes.
func (p *Proxy) forward(c net.Conn) {
	defer p.wg.Done()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		p.drop(c)
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		_ = up.Close()
		return // c is held until Restore
	}
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { p.pipe(up, c, false); done <- struct{}{} }()
	go func() { p.pipe(c, up, true); done <- struct{}{} }()
	<-done
	p.drop(c)
	p.drop(up)
	<-done
}

func (p *Proxy) drop(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}
