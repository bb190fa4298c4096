package instancemetrics

import (
	"bytes"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/tlsfiles"
)

// Auth decides who may scrape: a request with the bearer token of TokenFile, or one whose TLS
// client certificate the server verified against the Cluster's CA (ServerTLS asks for one
// without requiring it).
type Auth struct {
	// TokenFile holds the token (the metrics Secret mounted in the Pod); read at each request,
	// so a new token is taken without a restart. Missing or empty: no token is accepted.
	TokenFile string
}

// errNoToken: the token file is missing or empty; only certificates are accepted.
var errNoToken = errors.New("no metrics token is configured")

// allowed reports whether r may scrape, and why not.
func (a Auth) allowed(r *http.Request) error {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		return nil
	}
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return errors.New("no bearer token and no verified client certificate")
	}
	want, err := a.token()
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), want) != 1 {
		return errors.New("the bearer token is not the Cluster's metrics token")
	}
	return nil
}

func (a Auth) token() ([]byte, error) {
	if a.TokenFile == "" {
		return nil, errNoToken
	}
	b, err := os.ReadFile(a.TokenFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoToken, err)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, errNoToken
	}
	return b, nil
}

// Handler serves reg's metrics at any path to the requests a allows; the others get 401.
func Handler(reg prometheus.Gatherer, a Auth, logf func(msg string, kv ...any)) http.Handler {
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, Timeout: 2 * GatherTimeout})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.allowed(r); err != nil {
			if logf != nil {
				logf("metrics scrape refused", "remote", r.RemoteAddr, "reason", err.Error())
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "unauthorized: present the Cluster's metrics token or a client certificate of its CA", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ServerTLS is the metrics server's TLS configuration: the instance's server certificate from
// files (followed as it is renewed), and a client certificate verified against their CAs when
// one is presented (a scraper with the token presents none).
func ServerTLS(files *tlsfiles.Loader) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			m, err := files.Current()
			if err != nil {
				return nil, err
			}
			return &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"},
				ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: m.Roots, Certificates: []tls.Certificate{m.Certificate}}, nil
		},
	}
}
