package proc

import "sync"

// Output collects what a child writes to its stdout and stderr: assign it to both. It is safe
// for the child's writers and a concurrent reader, and with Keep > 0 it holds only the last Keep
// bytes, enough to explain a failure without keeping a long log.
type Output struct {
	Keep int

	mu sync.Mutex
	b  []byte
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.b = append(o.b, p...)
	if o.Keep > 0 && len(o.b) > o.Keep {
		o.b = append(o.b[:0], o.b[len(o.b)-o.Keep:]...)
	}
	return len(p), nil
}

// String returns what was kept.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return string(o.b)
}
