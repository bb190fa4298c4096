package mysqldtest

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"sync/atomic"
)

var (
	hostSeq     atomic.Uint32
	serverIDSeq atomic.Uint32
)

// nextHost returns a loopback address 127.0.0.2 to 127.0.0.251, spreading test binaries apart by
// their process id. Distinct addresses are a convenience; ports are what keeps servers apart.
func nextHost() string {
	n := (uint32(os.Getpid()) + hostSeq.Add(1)) % 250
	return fmt.Sprintf("127.0.0.%d", n+2)
}

// nextServerID returns a server_id unique within this test binary.
func nextServerID() int { return int(serverIDSeq.Add(1)) }

// freePort returns a TCP port that is free on host right now.
func freePort(host string) (int, error) {
	ports, err := FreePorts(host, 1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreePorts returns n distinct TCP ports that are free on host right now. Every listener stays
// open until all are chosen: closing each before asking for the next lets the kernel hand out the
// same port twice.
func FreePorts(host string, n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("finding a free port on %s: %w", host, err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// startArgs returns the mysqld command line of s; the paths are the ones seen inside the chroot.
func (s *Server) startArgs() []string {
	dir := s.InChroot(s.Dir)
	args := []string{
		"--no-defaults",
		"--user=root",
		"--datadir=" + dir + "/data",
		"--bind-address=" + s.Host,
		"--port=" + strconv.Itoa(s.Port),
		"--socket=" + dir + "/mysqld.sock",
		"--pid-file=" + dir + "/mysqld.pid",
		"--log-error=" + dir + "/error.log",
		"--mysqlx=OFF",
		"--secure-file-priv=",
		"--skip-name-resolve",
		"--server-id=" + strconv.Itoa(s.ServerID),
		"--report-host=" + s.Host,
		"--report-port=" + strconv.Itoa(s.Port),
		"--gtid-mode=ON",
		"--enforce-gtid-consistency=ON",
		"--log-bin=binlog",
		"--relay-log=relay-bin",
		"--max-connections=50",
		"--ssl-ca=" + s.InChroot(s.TLS.CAFile),
		"--ssl-cert=" + s.InChroot(s.TLS.CertFile),
		"--ssl-key=" + s.InChroot(s.TLS.KeyFile),
		"--plugin-load-add=mysql_clone.so",
	}
	args = append(args, memoryArgs...)
	return append(args, s.extraArgs...)
}
