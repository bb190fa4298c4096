package instance

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instance"
)

var errFlag = errors.New("invalid flag value")

// parsePeers parses --peer name=host:mysqlPort:managerPort values.
func parsePeers(values []string) (map[string]instance.PeerAddress, error) {
	out := map[string]instance.PeerAddress{}
	for _, v := range values {
		name, addr, ok := strings.Cut(v, "=")
		parts := strings.Split(addr, ":")
		if !ok || name == "" || len(parts) != 3 || parts[0] == "" {
			return nil, fmt.Errorf("%w: --peer %q, want name=host:mysqlPort:managerPort", errFlag, v)
		}
		mysqlPort, err1 := strconv.Atoi(parts[1])
		managerPort, err2 := strconv.Atoi(parts[2])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%w: --peer %q: ports must be numbers", errFlag, v)
		}
		out[name] = instance.PeerAddress{Host: parts[0], MySQLPort: mysqlPort,
			ManagerAddr: net.JoinHostPort(parts[0], strconv.Itoa(managerPort))}
	}
	return out, nil
}

// keyValues parses key=value flags.
func keyValues(values []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range values {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: %q, want key=value", errFlag, v)
		}
		out[k] = val
	}
	return out, nil
}
