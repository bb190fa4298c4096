package tlsfiles

import (
	"crypto/tls"
)

// ServerConfig is a server's mTLS configuration following l: each handshake presents the current
// certificate and requires a client certificate signed by one of the current CAs.
func ServerConfig(l *Loader) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// Without certificates of its own, the server asks for a configuration per connection.
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			m, err := l.Current()
			if err != nil {
				return nil, err
			}
			return &tls.Config{
				MinVersion: tls.VersionTLS12, ClientAuth: tls.RequireAndVerifyClientCert,
				ClientCAs: m.Roots, Certificates: []tls.Certificate{m.Certificate},
			}, nil
		},
	}
}

// ClientConfig is a client's mTLS configuration from the current files of l: trust their CAs and
// present their certificate. Call it for each new connection (or set of connections) to follow
// renewals; the configuration it returns does not change.
func ClientConfig(l *Loader) (*tls.Config, error) {
	m, err := l.Current()
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: m.Roots, Certificates: []tls.Certificate{m.Certificate}}, nil
}
