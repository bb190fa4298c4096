package instance

import (
	"errors"
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
		if err != nil || name == "" || fd < 3 {
			log.Info("ignoring an unreadable inherited socket", "value", pair)
			continue
		}
		unix.CloseOnExec(fd)
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

// handOver duplicates the listening sockets without close-on-exec (dup(2); the listeners stay
// as they are, non-blocking) and returns the listenFDsEnv value naming the duplicates, and a
// function that closes them (when execve failed). Call it with syscall.ForkLock held until
// execve, so that no child started meanwhile inherits them.
func (s *listeningSockets) handOver() (string, func(), error) {
	if s == nil {
		return "", func() {}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var fds []int
	closeAll := func() {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
	}
	var pairs []string
	for name, ln := range s.open {
		raw, err := ln.SyscallConn()
		if err != nil {
			closeAll()
			return "", nil, fmt.Errorf("handing the %s socket over: %w", name, err)
		}
		dup := -1
		var dupErr error
		if err := raw.Control(func(fd uintptr) { dup, dupErr = unix.Dup(int(fd)) }); err != nil || dupErr != nil {
			closeAll()
			return "", nil, fmt.Errorf("handing the %s socket over: %w", name, errors.Join(err, dupErr))
		}
		fds = append(fds, dup)
		pairs = append(pairs, name+"="+strconv.Itoa(dup))
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ","), closeAll, nil
}
