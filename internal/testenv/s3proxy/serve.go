package s3proxy

import (
	"errors"
	"fmt"
	"html"
	"net/http"
	"time"
)

var (
	errCutRequest = errors.New("s3proxy: request body cut")
	errCut        = errors.New("s3proxy: connection closed")
)

// ServeHTTP forwards the request, applying the fault that matches it, if any.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, action, ok := p.record(r)
	if !ok {
		p.rp.ServeHTTP(w, r)
		return
	}
	switch action.kind {
	case actStatus:
		writeS3Error(w, r, action.status, req)
	case actDrop:
		closeConnection(w)
	case actDelay:
		select {
		case <-time.After(action.delay):
			p.rp.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	case actCutRequest:
		r.Body = &cutBody{src: r.Body, left: action.n}
		fallthrough
	default:
		fw := &faultWriter{w: w, action: action}
		defer fw.finish()
		p.rp.ServeHTTP(fw, r)
	}
}

// writeS3Error answers as S3 does when it fails a request.
func writeS3Error(w http.ResponseWriter, r *http.Request, status int, req Request) {
	code := "InternalError"
	if status == http.StatusServiceUnavailable {
		code = "SlowDown"
	}
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Connection", "close") // the request body may be unread
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
			`<Error><Code>%s</Code><Message>injected by s3proxy</Message><Resource>%s</Resource>`+
			`<RequestId>s3proxy-%d</RequestId></Error>`, code, html.EscapeString(r.URL.Path), req.Seq)
	}
}

// closeConnection takes over the client's connection and closes it.
func closeConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// cutBody ends a request body with an error after left bytes.
type cutBody struct {
	src interface {
		Read([]byte) (int, error)
		Close() error
	}
	left int64
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errCutRequest
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.src.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cutBody) Close() error { return b.src.Close() }

// faultWriter stands between the reverse proxy and the client's connection to drop, cut or
// corrupt the response.
type faultWriter struct {
	w       http.ResponseWriter
	action  Action
	written int64
	closed  bool
}

func (f *faultWriter) Header() http.Header { return f.w.Header() }

// swallows reports whether the response never reaches the client.
func (f *faultWriter) swallows() bool {
	return f.closed || f.action.kind == actDropResponse || f.action.kind == actCutRequest
}

func (f *faultWriter) WriteHeader(code int) {
	if !f.swallows() {
		f.w.WriteHeader(code)
	}
}

func (f *faultWriter) Write(b []byte) (int, error) {
	if f.closed {
		return 0, errCut
	}
	if f.swallows() {
		return len(b), nil
	}
	switch f.action.kind {
	case actCorrupt:
		if at := f.action.n - f.written; at >= 0 && at < int64(len(b)) {
			b = append([]byte(nil), b...)
			b[at] ^= 0xff
		}
	case actCutResponse:
		if f.written+int64(len(b)) > f.action.n {
			n, _ := f.w.Write(b[:f.action.n-f.written])
			f.written += int64(n)
			_ = http.NewResponseController(f.w).Flush()
			f.close()
			return n, errCut
		}
	}
	n, err := f.w.Write(b)
	f.written += int64(n)
	return n, err
}

// Flush implements http.Flusher for the reverse proxy; nothing is flushed while the response is
// being swallowed, lest the default status reach the client.
func (f *faultWriter) Flush() {
	if !f.swallows() {
		_ = http.NewResponseController(f.w).Flush()
	}
}

func (f *faultWriter) close() {
	if !f.closed {
		f.closed = true
		closeConnection(f.w)
	}
}

// finish closes the connection of a response that was swallowed.
func (f *faultWriter) finish() {
	if f.swallows() {
		f.close()
	}
}
