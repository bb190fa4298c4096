package objectstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"
)

// partBuffers is how many parts an upload holds in memory: one filling from the archive while
// the other is sent.
const partBuffers = 2

// part is one chunk of the archive. The last part has last set (and may be empty); a part with
// err set ends the stream with that read error.
type part struct {
	buf  []byte
	n    int
	last bool
	err  error
}

// partReader cuts an archive into parts in its own goroutine, so that reading the next part
// overlaps sending the current one, and hashes and counts the bytes in order. Buffers go back
// through release; there are never more than partBuffers of them.
type partReader struct {
	src   io.Reader
	size  int
	free  chan []byte
	parts chan part
	stop  chan struct{}
	once  sync.Once

	// Written by the goroutine only; read by the consumer after it received the last part.
	hash  hash.Hash
	count int64
}

func startPartReader(src io.Reader, size int) *partReader {
	r := &partReader{
		src:   src,
		size:  size,
		free:  make(chan []byte, partBuffers),
		parts: make(chan part),
		stop:  make(chan struct{}),
		hash:  sha256.New(),
	}
	for range partBuffers {
		r.free <- nil // allocated on first use, so a small archive costs one buffer
	}
	go r.run()
	return r
}

func (r *partReader) run() {
	defer close(r.parts)
	for {
		var buf []byte
		select {
		case buf = <-r.free:
		case <-r.stop:
			return
		}
		if buf == nil {
			buf = make([]byte, r.size)
		}
		n, err := io.ReadFull(r.src, buf)
		r.hash.Write(buf[:n])
		r.count += int64(n)
		p := part{buf: buf, n: n}
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			p.last = true
		case err != nil:
			p.err = err
		}
		select {
		case r.parts <- p:
		case <-r.stop:
			return
		}
		if p.last || p.err != nil {
			return
		}
	}
}

// next returns the next part. It gives up when ctx ends, since a hung producer may never
// answer the Read in progress.
func (r *partReader) next(ctx context.Context) (part, error) {
	select {
	case p, ok := <-r.parts:
		if !ok {
			return part{}, errors.New("the part reader stopped")
		}
		return p, nil
	case <-ctx.Done():
		return part{}, fmt.Errorf("waiting for the archive: %w", context.Cause(ctx))
	}
}

// release gives a part's buffer back for the next read.
func (r *partReader) release(p part) { r.free <- p.buf }

// sum returns the byte count and hex sha256 of everything read; valid after the last part.
func (r *partReader) sum() (int64, []byte) { return r.count, r.hash.Sum(nil) }

// close stops the goroutine. A Read of the archive in progress is not interrupted: the goroutine
// exits when it returns.
func (r *partReader) close() { r.once.Do(func() { close(r.stop) }) }
