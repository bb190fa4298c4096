// Package egress refuses the operator's outbound connections to addresses on the operator's own
// host or link: loopback (127.0.0.0/8, ::1), link-local unicast (169.254.0.0/16, where cloud
// metadata services answer, and fe80::/10), link-local multicast (224.0.0.0/24, ff02::/16) and
// the unspecified address (0.0.0.0, ::), also in their IPv4-mapped IPv6 forms (::ffff:127.0.0.1).
//
// Users name the endpoints the operator connects to (an object store in a Cluster's spec), and
// the operator connects from its own network position: to its own metrics and health ports, to
// a node's API server or to the metadata service, a tenant of any namespace could otherwise send
// requests the operator signs. Private ranges (10/8, 172.16/12, 192.168/16, fc00::/7) are not
// refused: in-cluster object stores live there.
//
// Guard.Control is a net.Dialer Control function: it sees the IP address a connection is about
// to be made to, after DNS resolution and before the connect call, so a name that resolves to a
// refused address (localhost, or a name rebound between a check and the connection) is refused
// too, as is every new connection after an HTTP redirect. Networks listed in Guard.Allow are
// reachable although a rule refuses them: a test server or an S3 server beside the operator.
//
// Classify and Guard.Check are pure functions of an address; a refusal is a *RefusedError that
// matches ErrRefused with errors.Is and names the address, the rule and how to allow it.
package egress
