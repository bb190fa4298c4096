package operator

import (
	"net/netip"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/egress"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// ObjectStoreAllowFlag is the flag of `manager controller` that sets
// Options.ObjectStoreAllowedCIDRs.
const ObjectStoreAllowFlag = "object-store-allowed-cidrs"

// ObjectStoreGuard is the dial-time guard of every object-store client the operator builds (the
// retention pass, the Backup controller's metadata reads and remote cleanup): it refuses
// loopback, link-local and unspecified addresses, however the endpoint names them, except in the
// networks allow lists.
func ObjectStoreGuard(allow []netip.Prefix) egress.Guard {
	return egress.Guard{What: "object store endpoint", Allow: allow, Hint: "allow with --" + ObjectStoreAllowFlag}
}

// OpenObjectStore is how the operator opens an object store: a client whose connections
// ObjectStoreGuard(allow) checks.
func OpenObjectStore(allow []netip.Prefix) func(objectstore.Config) (*objectstore.Client, error) {
	control := ObjectStoreGuard(allow).Control
	return func(cfg objectstore.Config) (*objectstore.Client, error) {
		return objectstore.NewGuarded(cfg, control)
	}
}

// openStore is OpenObjectStore(allow) as the Backup controller takes it.
func openStore(allow []netip.Prefix) func(objectstore.Config) (objectstore.Store, error) {
	open := OpenObjectStore(allow)
	return func(cfg objectstore.Config) (objectstore.Store, error) {
		c, err := open(cfg)
		if err != nil {
			return nil, err // not a nil *Client in a non-nil Store
		}
		return c, nil
	}
}
