package egress_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/egress"
)

// resolverTo is a resolver that answers every A query with ip and every other query with no
// record, as a DNS server controlled by whoever names the endpoint would.
func resolverTo(ip netip.Addr) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go answerDNS(server, ip)
		return client, nil
	}}
}

// answerDNS answers one query on a stream connection (RFC 1035 4.2.2: a two-byte length, then
// the message) with the query's header and question and, for an A query, one A record of ip.
func answerDNS(c net.Conn, ip netip.Addr) {
	defer c.Close()
	var size [2]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return
	}
	q := make([]byte, binary.BigEndian.Uint16(size[:]))
	if _, err := io.ReadFull(c, q); err != nil || len(q) < 12 {
		return
	}
	end := 12 // the question: labels up to the root, then type and class
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5
	if end > len(q) {
		return
	}
	resp := append([]byte(nil), q[:end]...)
	resp[2], resp[3] = 0x81, 0x80 // a response, recursion desired and available, no error
	clear(resp[6:12])             // no answer, authority or additional record yet
	if binary.BigEndian.Uint16(q[end-4:]) == 1 && ip.Is4() {
		a := ip.As4()
		resp[7] = 1
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, a[0], a[1], a[2], a[3])
	}
	binary.BigEndian.PutUint16(size[:], uint16(len(resp)))
	_, _ = c.Write(append(size[:], resp...))
}

// TestDialRefuses: a net.Dialer with Guard.Control refuses the address a connection is about to
// be made to, however it was named: an IP literal in each form, localhost through the system
// resolver, and names a resolver answers with a refused address (what a rebound name does
// between a check of the name and the connection). Control runs before connect(2), so no packet
// leaves for a refused address. One row connects through the allowance, to a real listener.
func TestDialRefuses(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	allowedPort := l.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		rule     string
		addr     string
		resolver *net.Resolver
		allow    string
		want     egress.Rule
	}{
		{"loopback: 127.0.0.1", "127.0.0.1:80", nil, "", egress.Loopback},
		{"loopback: localhost through the system resolver", "localhost:80", nil, "", egress.Loopback},
		{"loopback: a name a DNS server answers with 127.0.0.1", "store.rebind.test.:80",
			resolverTo(netip.MustParseAddr("127.0.0.1")), "", egress.Loopback},
		{"loopback: IPv4-mapped [::ffff:127.0.0.1]", "[::ffff:127.0.0.1]:80", nil, "", egress.Loopback},
		{"loopback: ::1", "[::1]:80", nil, "", egress.Loopback},
		{"link-local unicast: the metadata service", "169.254.169.254:80", nil, "", egress.LinkLocalUnicast},
		{"link-local unicast: a name a DNS server answers with 169.254.169.254", "metadata.rebind.test.:80",
			resolverTo(netip.MustParseAddr("169.254.169.254")), "", egress.LinkLocalUnicast},
		{"link-local unicast: IPv4-mapped [::ffff:169.254.169.254]", "[::ffff:169.254.169.254]:80", nil, "",
			egress.LinkLocalUnicast},
		{"link-local unicast: fe80::1 on lo", "[fe80::1%lo]:80", nil, "", egress.LinkLocalUnicast},
		{"link-local multicast: 224.0.0.1", "224.0.0.1:80", nil, "", egress.LinkLocalMulticast},
		{"unspecified: 0.0.0.0", "0.0.0.0:80", nil, "", egress.Unspecified},
		{"unspecified: ::", "[::]:80", nil, "", egress.Unspecified},
		{"allowance: 127.0.0.1/32 reaches its listener", net.JoinHostPort("127.0.0.1", strconv.Itoa(allowedPort)), nil,
			"127.0.0.1/32", ""},
		{"allowance: a name resolving into 127.0.0.1/32 reaches it too",
			net.JoinHostPort("store.rebind.test.", strconv.Itoa(allowedPort)), resolverTo(netip.MustParseAddr("127.0.0.1")),
			"127.0.0.1/32", ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			g := egress.Guard{What: "object store endpoint"}
			if tc.allow != "" {
				g.Allow = []netip.Prefix{netip.MustParsePrefix(tc.allow)}
			}
			d := &net.Dialer{Timeout: 5 * time.Second, Control: g.Control, Resolver: tc.resolver}
			c, err := d.DialContext(t.Context(), "tcp", tc.addr)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("dial %s: %v, want a connection", tc.addr, err)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatalf("dial %s connected, want a refusal", tc.addr)
			}
			var refused *egress.RefusedError
			if !errors.As(err, &refused) || !errors.Is(err, egress.ErrRefused) {
				t.Fatalf("dial %s: %v, want a refusal", tc.addr, err)
			}
			if refused.Rule != tc.want {
				t.Errorf("dial %s refused by %q, want %q (%v)", tc.addr, refused.Rule, tc.want, err)
			}
		})
	}
}
