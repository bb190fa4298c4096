package egress_test

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/egress"
)

// TestClassify: one row per rule, each in its IPv4, IPv6 and IPv4-mapped IPv6 forms where they
// exist, and the ranges no rule refuses.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		rule string
		ip   string
		want egress.Rule
	}{
		{"loopback: 127.0.0.1", "127.0.0.1", egress.Loopback},
		{"loopback: the whole of 127.0.0.0/8", "127.255.255.254", egress.Loopback},
		{"loopback: ::1", "::1", egress.Loopback},
		{"loopback: IPv4-mapped ::ffff:127.0.0.1", "::ffff:127.0.0.1", egress.Loopback},
		{"link-local unicast: the metadata service 169.254.169.254", "169.254.169.254", egress.LinkLocalUnicast},
		{"link-local unicast: 169.254.0.1", "169.254.0.1", egress.LinkLocalUnicast},
		{"link-local unicast: fe80::1", "fe80::1", egress.LinkLocalUnicast},
		{"link-local unicast: fe80::1 with a zone", "fe80::1%eth0", egress.LinkLocalUnicast},
		{"link-local unicast: the top of fe80::/10", "febf::1", egress.LinkLocalUnicast},
		{"link-local unicast: IPv4-mapped ::ffff:169.254.169.254", "::ffff:169.254.169.254", egress.LinkLocalUnicast},
		{"link-local multicast: 224.0.0.251", "224.0.0.251", egress.LinkLocalMulticast},
		{"link-local multicast: ff02::1", "ff02::1", egress.LinkLocalMulticast},
		{"link-local multicast: IPv4-mapped ::ffff:224.0.0.1", "::ffff:224.0.0.1", egress.LinkLocalMulticast},
		{"unspecified: 0.0.0.0", "0.0.0.0", egress.Unspecified},
		{"unspecified: ::", "::", egress.Unspecified},
		{"unspecified: IPv4-mapped ::ffff:0.0.0.0", "::ffff:0.0.0.0", egress.Unspecified},
		{"metadata service: EC2's IPv6 fd00:ec2::254", "fd00:ec2::254", egress.MetadataService},
		{"metadata service: Alibaba Cloud's 100.100.100.200", "100.100.100.200", egress.MetadataService},
		{"metadata service: IPv4-mapped ::ffff:100.100.100.200", "::ffff:100.100.100.200", egress.MetadataService},
		{"allowed: fd00:ec2::253, beside EC2's metadata service", "fd00:ec2::253", ""},
		{"allowed: 100.100.100.201, beside Alibaba Cloud's metadata service", "100.100.100.201", ""},
		{"allowed: private 10.0.0.0/8", "10.96.0.10", ""},
		{"allowed: private 172.16.0.0/12", "172.30.255.2", ""},
		{"allowed: private 192.168.0.0/16", "192.168.1.20", ""},
		{"allowed: IPv4-mapped private ::ffff:10.1.2.3", "::ffff:10.1.2.3", ""},
		{"allowed: unique local fd00::/8", "fd00::2", ""},
		{"allowed: public IPv4", "52.216.8.1", ""},
		{"allowed: public IPv6", "2600:1f18::1", ""},
		{"allowed: 169.255.0.1, just past link-local", "169.255.0.1", ""},
		{"allowed: fec0::1, just past fe80::/10", "fec0::1", ""},
		{"allowed: 128.0.0.1, just past loopback", "128.0.0.1", ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := egress.Classify(netip.MustParseAddr(tc.ip)); got != tc.want {
				t.Errorf("Classify(%s) = %q, want %q", tc.ip, got, tc.want)
			}
		})
	}
}

// TestGuardCheck: Allow lets exactly its networks through, IPv4 networks also in their mapped
// form; a refusal names the address, the rule and the hint, and matches ErrRefused.
func TestGuardCheck(t *testing.T) {
	g := egress.Guard{What: "object store endpoint", Hint: "allow with --flag",
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("fe80::/64")}}
	for _, tc := range []struct {
		rule    string
		addr    string
		refused egress.Rule
	}{
		{"allowed network: 127.0.0.1/32", "127.0.0.1:7070", ""},
		{"allowed network: its IPv4-mapped form", "[::ffff:127.0.0.1]:7070", ""},
		{"allowed network: fe80::/64 with a zone", "[fe80::5%eth0]:443", ""},
		{"loopback outside the allowed network", "127.0.0.2:7070", egress.Loopback},
		{"::1 is not in 127.0.0.1/32", "[::1]:7070", egress.Loopback},
		{"link-local outside the allowed network", "169.254.169.254:80", egress.LinkLocalUnicast},
		{"link-local IPv6 outside the allowed network", "[fe80:0:0:1::5]:443", egress.LinkLocalUnicast},
		{"private needs no allowance", "10.0.0.1:9000", ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			err := g.Check(netip.MustParseAddrPort(tc.addr))
			var refused *egress.RefusedError
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("Check(%s) = %v, want allowed", tc.addr, err)
			case tc.refused == "":
			case !errors.As(err, &refused) || !errors.Is(err, egress.ErrRefused):
				t.Fatalf("Check(%s) = %v, want a *RefusedError matching ErrRefused", tc.addr, err)
			case refused.Rule != tc.refused:
				t.Errorf("Check(%s) refused by %q, want %q", tc.addr, refused.Rule, tc.refused)
			}
		})
	}
	err := g.Check(netip.MustParseAddrPort("169.254.169.254:80"))
	want := "object store endpoint 169.254.169.254:80 refused: link-local address (allow with --flag)"
	if err == nil || err.Error() != want {
		t.Errorf("refusal reads %v, want %q", err, want)
	}
}

// TestGuardControlRefusesWhatItCannotRead: Control refuses an address that is not an IP address
// and port (a net.Dialer never passes one; a refusal is the safe answer).
func TestGuardControlRefusesWhatItCannotRead(t *testing.T) {
	err := egress.Guard{What: "object store endpoint"}.Control("tcp", "metadata.internal:80", nil)
	if !errors.Is(err, egress.ErrRefused) || !strings.Contains(err.Error(), "not an IP address") {
		t.Errorf("Control of a name = %v, want a refusal", err)
	}
}

// TestParseAllow: CIDRs and single addresses, IPv4-mapped networks taken as IPv4, host bits
// cleared; what is not an address is an error naming it.
func TestParseAllow(t *testing.T) {
	for _, tc := range []struct {
		rule  string
		items []string
		want  []string
		err   string
	}{
		{"a CIDR", []string{"127.0.0.0/8"}, []string{"127.0.0.0/8"}, ""},
		{"a single IPv4 address", []string{"127.0.0.1"}, []string{"127.0.0.1/32"}, ""},
		{"a single IPv6 address", []string{"::1"}, []string{"::1/128"}, ""},
		{"host bits are cleared", []string{"169.254.10.20/16"}, []string{"169.254.0.0/16"}, ""},
		{"an IPv4-mapped network is IPv4", []string{"::ffff:127.0.0.1/128"}, []string{"127.0.0.1/32"}, ""},
		{"blanks and empty items are skipped", []string{" 127.0.0.1 ", ""}, []string{"127.0.0.1/32"}, ""},
		{"nothing allows nothing", nil, nil, ""},
		{"a name is an error", []string{"localhost"}, nil, `"localhost" is neither`},
		{"a zone is an error", []string{"fe80::1%eth0"}, nil, `"fe80::1%eth0" is neither`},
		{"a short IPv4-mapped network is an error", []string{"::ffff:0.0.0.0/80"}, nil, "at least 96"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, err := egress.ParseAllow(tc.items)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseAllow(%q) = %v, %v; want an error containing %q", tc.items, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, p := range got {
				s = append(s, p.String())
			}
			if !slices.Equal(s, tc.want) {
				t.Errorf("ParseAllow(%q) = %v, want %v", tc.items, s, tc.want)
			}
		})
	}
}
