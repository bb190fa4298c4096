package s3proxy

import (
	"fmt"
	"regexp"
	"slices"
	"time"
)

// Request is what the proxy recorded of one request.
type Request struct {
	Seq    int // 1 for the first request since the proxy started or was Reset
	Kind   Kind
	Method string
	Path   string
	Query  string
}

func (r Request) String() string {
	return fmt.Sprintf("#%d %s %s %s?%s", r.Seq, r.Kind, r.Method, r.Path, r.Query)
}

// Match selects the requests a Fault applies to.
type Match func(Request) bool

// All matches every request.
func All() Match { return func(Request) bool { return true } }

// Nth matches the n-th request (counting from 1 since the start or the last Reset).
func Nth(n int) Match { return func(r Request) bool { return r.Seq == n } }

// OfKind matches requests of any of the given kinds.
func OfKind(kinds ...Kind) Match {
	return func(r Request) bool { return slices.Contains(kinds, r.Kind) }
}

// MethodPath matches requests with that method (any when empty) whose path matches re.
func MethodPath(method string, re *regexp.Regexp) Match {
	return func(r Request) bool { return (method == "" || r.Method == method) && re.MatchString(r.Path) }
}

// And matches requests every given Match matches.
func And(ms ...Match) Match {
	return func(r Request) bool {
		for _, m := range ms {
			if !m(r) {
				return false
			}
		}
		return true
	}
}

type actionKind int

const (
	actStatus actionKind = iota + 1
	actDrop
	actDropResponse
	actCutRequest
	actCutResponse
	actCorrupt
	actDelay
)

// Action is what the proxy does to a request a Fault matched.
type Action struct {
	kind   actionKind
	status int
	n      int64
	delay  time.Duration
}

// Status answers with an S3 error document (code InternalError, or SlowDown for 503) and that
// HTTP status, without forwarding the request.
func Status(code int) Action { return Action{kind: actStatus, status: code} }

// Drop closes the client's connection without forwarding the request.
func Drop() Action { return Action{kind: actDrop} }

// DropResponse forwards the request, lets the server act on it, and closes the client's
// connection instead of answering.
func DropResponse() Action { return Action{kind: actDropResponse} }

// CutRequestBody forwards the request with only the first n bytes of its body, so the server
// sees the body end early, and closes the client's connection.
func CutRequestBody(n int64) Action { return Action{kind: actCutRequest, n: n} }

// CutResponseBody answers with the response headers and the first n bytes of the body, then
// closes the connection. A body of n bytes or fewer passes whole.
func CutResponseBody(n int64) Action { return Action{kind: actCutResponse, n: n} }

// CorruptResponseBody inverts the bits of the response body byte at offset n (if the body is
// that long); the length is unchanged.
func CorruptResponseBody(n int64) Action { return Action{kind: actCorrupt, n: n} }

// Delay waits d (or until the request is cancelled), then forwards the request.
func Delay(d time.Duration) Action { return Action{kind: actDelay, delay: d} }

// Fault applies Action to requests Match selects, at most Times of them (0: all).
type Fault struct {
	Match  Match
	Action Action
	Times  int
}

// fault is an injected Fault and its count of hits.
type fault struct {
	Fault
	hits int
}

func (f *fault) applies(r Request) bool {
	return (f.Times == 0 || f.hits < f.Times) && (f.Match == nil || f.Match(r))
}
