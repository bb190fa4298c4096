package mysql

import "context"

// ReloadTLS makes the server read its ssl_ca, ssl_cert and ssl_key files again (ALTER INSTANCE
// RELOAD TLS): new connections get the new certificate, established ones keep theirs. When the
// files do not load, the server keeps the material it had and the statement fails.
func (o *operator) ReloadTLS(ctx context.Context) error {
	return o.exec(ctx, "reloading the TLS certificates", "ALTER INSTANCE RELOAD TLS")
}
