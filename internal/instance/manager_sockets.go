package instance

import (
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
)

// listenFDsEnv hands the listening sockets of the probes and the control API to the program an
// in-place update replaces the instance manager with, as name=fd pairs: the sockets stay open
// across execve, so the kubelet's probes and the operator's calls made meanwhile wait in their
// backlog until the new program serves them, instead of being refused.
const listenFDsEnv = "CNM_LISTEN_FDS"

// listeningSockets are the instance manager's listening sockets by name: those inherited from
// the previous program, until taken, and those listening now. Safe for concurrent use.
type listeningSockets struct {
	mu        sync.Mutex
	inherited map[string]net.Listener
	open      map[string]*net.TCPListener
}

// inheritedSockets takes the sockets the previous program handed over (listenFDsEnv); a pair
// that cannot be read is logged and skipped (its server then listens anew).
func inheritedSockets(log logr.Logger) *listeningSockets {
	s := &listeningSockets{inherited: map[string]net.Listener{}, open: map[string]*net.TCPListener{}}
	v, ok := os.LookupEnv(listenFDsEnv)
	if !ok {
		return s
	}
	_ = os.Unsetenv(listenFDsEnv)
	for _, pair := range strings.Split(v, ",") {
		name, fdText, _ := strings.Cut(pair, "=")
		fd, err := strconv.Atoi(fdText)
		if err != nil || name == "" {
			log.Info("ignoring an unreadable inherited socket", "value", pair)
			continue
		}
		f := os.NewFile(uintptr(fd), name)
		ln, err := net.FileListener(f) // a duplicate, close-on-exec
		_ = f.Close()
		if err != nil {
			log.Info("ignoring an inherited socket that is not a listener", "name", name, "fd", fd, "error", err.Error())
			continue
		}
		s.inherited[name] = ln
	}
	return s
}

// listen returns the socket inherited under name when its address is addr's, else a new one
// listening on addr. A nil listeningSockets only listens (nothing is handed over).
func (s *listeningSockets) listen(name, addr string) (net.Listener, error) {
	if s == nil {
		return net.Listen("tcp", addr)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ln, ok := s.inherited[name]
	delete(s.inherited, name)
	if ok && !sameListenAddress(ln.Addr().String(), addr) {
		_ = ln.Close()
		ok = false
	}
	if !ok {
		var err error
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, err
		}
	}
	if tl, isTCP := ln.(*net.TCPListener); isTCP {
		s.open[name] = tl
	}
	return ln, nil
}

// sameListenAddress compares a listener's address with a configured one (":8000" listens on
// every address, which a listener reports as "[::]:8000").
func sameListenAddress(got, want string) bool {
	gh, gp, err1 := net.SplitHostPort(got)
	wh, wp, err2 := net.SplitHostPort(want)
	if err1 != nil || err2 != nil || gp != wp {
		return false
	}
	unspecified := func(h string) bool { return h == "" || h == "::" || h == "0.0.0.0" }
	return gh == wh || (unspecified(gh) && unspecified(wh))
}

// handOver duplicates the listening sockets without close-on-exec and returns the listenFDsEnv
// value that names them, and a function that closes the duplicates (when execve failed).
func (s *listeningSockets) handOver() (string, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	var pairs []string
	for name, ln := range s.open {
		f, err := ln.File() // a duplicate, close-on-exec
		if err != nil {
			closeAll()
			return "", nil, fmt.Errorf("handing the %s socket over: %w", name, err)
		}
		files = append(files, f)
		if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
			closeAll()
			return "", nil, fmt.Errorf("handing the %s socket over: %w", name, err)
		}
		pairs = append(pairs, name+"="+strconv.Itoa(int(f.Fd())))
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ","), closeAll, nil
}
