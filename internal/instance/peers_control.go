package instance

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// PeerAddress is how to reach one instance: mysqld at Host:MySQLPort (replication and clone
// verify its certificate against Host) and its control API at ManagerAddr.
type PeerAddress struct {
	Host        string
	MySQLPort   int
	ManagerAddr string
}

// PeerDirectory resolves instances of one Cluster to their addresses: listed ones as listed
// (tests), the others by their headless Service, <instance>.<namespace>.svc, with the Pod ports.
type PeerDirectory struct {
	Namespace, Cluster string
	Static             map[string]PeerAddress
}

// Address returns the address of instance.
func (d PeerDirectory) Address(instance string) PeerAddress {
	if a, ok := d.Static[instance]; ok {
		return a
	}
	host := instance + "." + d.Namespace + ".svc"
	return PeerAddress{Host: host, MySQLPort: specs.MySQLPort,
		ManagerAddr: net.JoinHostPort(host, strconv.Itoa(specs.ManagerPort))}
}

// InstanceAt names the instance whose mysqld is at host:port, "" if none.
func (d PeerDirectory) InstanceAt(host string, port int) string {
	for name, a := range d.Static {
		if a.Host == host && a.MySQLPort == port {
			return name
		}
	}
	name, ok := strings.CutSuffix(host, "."+d.Namespace+".svc")
	if !ok || port != specs.MySQLPort {
		return ""
	}
	if _, ok := specs.InstanceSerial(d.Cluster, name); !ok {
		return ""
	}
	if _, listed := d.Static[name]; listed {
		return ""
	}
	return name
}

// ControlPeers implements Peers over the other instances' control APIs, presenting the
// instance's client certificate (their control API lets it read GET /status only).
type ControlPeers struct {
	PeerDirectory
	Client *instanceclient.Client
}

// Target returns the control API target of instance; its certificate must name Host.
func (p ControlPeers) Target(instance string) instanceclient.Target {
	a := p.Address(instance)
	return instanceclient.Target{Instance: instance, Address: a.ManagerAddr, ServerName: a.Host}
}

// State asks instance for its gtid_executed and whether it accepts writes.
func (p ControlPeers) State(ctx context.Context, instance string) (PeerState, error) {
	st, err := p.Client.Status(ctx, p.Target(instance))
	if err != nil {
		return PeerState{}, err
	}
	set, err := gtid.Parse(st.GTIDExecuted)
	if err != nil {
		return PeerState{}, fmt.Errorf("gtid_executed reported by %s: %w", instance, err)
	}
	inFlight, err := gtid.Parse(st.GTIDInFlight)
	if err != nil {
		return PeerState{}, fmt.Errorf("GTIDs in flight reported by %s: %w", instance, err)
	}
	return PeerState{Executed: set, InFlight: inFlight, Writable: st.Role == "primary" && !st.ReadOnly,
		AckWaiters: int(st.AckWaiters)}, nil
}
