package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"syscall"
)

// Rule names why an address is refused.
type Rule string

// The rules, in the order Classify applies them. Their text ends a refusal's message.
const (
	Loopback           Rule = "loopback address"
	LinkLocalUnicast   Rule = "link-local address"
	LinkLocalMulticast Rule = "link-local multicast address"
	Unspecified        Rule = "unspecified address"
	MetadataService    Rule = "cloud metadata service address"
)

// metadataServices are instance metadata endpoints outside the link-local ranges: the IPv6 one
// of EC2 (fd00:ec2::254) and Alibaba Cloud's (100.100.100.200). An IAM role's credentials are
// one request away on each, like on 169.254.169.254.
var metadataServices = []netip.Addr{netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("100.100.100.200")}

// ErrRefused matches every refusal of a Guard with errors.Is.
var ErrRefused = errors.New("address refused")

// Classify returns the rule that refuses ip, or "" when none does. An IPv4-mapped IPv6 address
// is classified as the IPv4 address it maps; a zone is ignored.
func Classify(ip netip.Addr) Rule {
	ip = ip.Unmap().WithZone("")
	switch {
	case ip.IsLoopback():
		return Loopback
	case ip.IsLinkLocalUnicast():
		return LinkLocalUnicast
	case ip.IsLinkLocalMulticast():
		return LinkLocalMulticast
	case ip.IsUnspecified():
		return Unspecified
	}
	for _, m := range metadataServices {
		if ip == m {
			return MetadataService
		}
	}
	return ""
}

// Guard refuses connections to the addresses Classify refuses, except those in Allow.
type Guard struct {
	// What names the connections in a refusal, "object store endpoint" say.
	What string
	// Allow are the networks reachable although a rule refuses them; IPv4 networks also allow
	// the IPv4-mapped forms of their addresses.
	Allow []netip.Prefix
	// Hint tells how to allow an address; it ends a refusal's message, in parentheses.
	Hint string
}

// Check returns a *RefusedError when a rule refuses addr and Allow does not allow it, else nil.
func (g Guard) Check(addr netip.AddrPort) error {
	ip := addr.Addr().Unmap().WithZone("")
	rule := Classify(ip)
	if rule == "" {
		return nil
	}
	for _, p := range g.Allow {
		if p.Contains(ip) {
			return nil
		}
	}
	return &RefusedError{What: g.what(), Addr: addr, Rule: rule, Hint: g.Hint}
}

// Control is a net.Dialer Control function: address is the IP address and port being connected
// to. Anything else is refused, as an address it cannot judge.
func (g Guard) Control(_, address string, _ syscall.RawConn) error {
	addr, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%s %q refused: not an IP address and port: %w", g.what(), address, ErrRefused)
	}
	return g.Check(addr)
}

func (g Guard) what() string {
	if g.What == "" {
		return "address"
	}
	return g.What
}

// RefusedError is a connection a Guard refused.
type RefusedError struct {
	What string
	Addr netip.AddrPort
	Rule Rule
	Hint string
}

// Error reads like "object store endpoint 169.254.169.254:80 refused: link-local address (allow
// with --object-store-allowed-cidrs)".
func (e *RefusedError) Error() string {
	msg := fmt.Sprintf("%s %s refused: %s", e.What, e.Addr, e.Rule)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Is makes a RefusedError match ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// ParseAllow parses networks to allow: each item is a CIDR (127.0.0.0/8) or a single address
// (127.0.0.1, ::1). An IPv4-mapped IPv6 network is taken as the IPv4 network it maps.
func ParseAllow(items []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		p, err := parsePrefix(item)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func parsePrefix(item string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(item)
	if err != nil {
		ip, ipErr := netip.ParseAddr(item)
		if ipErr != nil || ip.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is neither a CIDR nor an IP address", item)
		}
		p = netip.PrefixFrom(ip, ip.BitLen())
	}
	if p.Addr().Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, fmt.Errorf("%q: an IPv4-mapped network needs a prefix length of at least 96", item)
		}
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}
