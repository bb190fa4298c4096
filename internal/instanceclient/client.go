package instanceclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// DefaultTimeout bounds every call, connection and TLS handshake included.
const DefaultTimeout = 5 * time.Second

// ErrUnreachable wraps every failure to get an answer from an instance in time: refused or
// timed-out connections, failed handshakes, broken responses.
var ErrUnreachable = errors.New("instance did not answer")

// HTTPError is an answer with a status other than 200.
type HTTPError struct {
	Instance   string
	StatusCode int
	Body       string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("instance %s answered %d: %s", e.Instance, e.StatusCode, e.Body)
}

// Target addresses one instance: Address is host:port (the Pod IP and the manager port) and
// ServerName the name its certificate must carry (its headless Service's .svc name).
type Target struct {
	Instance   string
	Address    string
	ServerName string
}

// Client calls instance managers. It is safe for concurrent use.
type Client struct {
	// tls returns the configuration of the next call: a client following renewed certificate
	// files returns the current ones.
	tls     func() (*tls.Config, error)
	timeout time.Duration
}

// TLSConfig is the operator side of the mTLS: present the client certificate, trust only caPEM.
func TLSConfig(caPEM, certPEM, keyPEM []byte) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate in the cluster CA data")
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading the operator client certificate: %w", err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// New returns a client with tlsConfig; timeout <= 0 means DefaultTimeout.
func New(tlsConfig *tls.Config, timeout time.Duration) *Client {
	return NewFollowing(func() (*tls.Config, error) { return tlsConfig, nil }, timeout)
}

// NewFollowing returns a client that asks tlsConfig for the configuration of each call, so that
// renewed certificates and CAs are used from the next call on; timeout <= 0 means DefaultTimeout.
func NewFollowing(tlsConfig func() (*tls.Config, error), timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{tls: tlsConfig, timeout: timeout}
}

// clientFor returns an HTTP client verifying t's certificate for t.ServerName: the instance is
// dialled by Pod IP, which no certificate carries. Connections are not reused across calls, so
// each call handshakes with the current TLS configuration.
func (c *Client) clientFor(t Target) (*http.Client, error) {
	base, err := c.tls()
	if err != nil {
		return nil, fmt.Errorf("the TLS configuration for %s: %w", t.Instance, err)
	}
	cfg := base.Clone()
	cfg.ServerName = t.ServerName
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:     cfg,
		DialContext:         (&net.Dialer{Timeout: c.timeout}).DialContext,
		TLSHandshakeTimeout: c.timeout,
		DisableKeepAlives:   true,
	}}, nil
}

// Status fetches GET /status from t.
func (c *Client) Status(ctx context.Context, t Target) (*Status, error) {
	var st Status
	if err := c.do(ctx, t, http.MethodGet, StatusPath, nil, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// SetSemiSync applies the runtime semi-sync acknowledgement count on t (the primary).
func (c *Client) SetSemiSync(ctx context.Context, t Target, req SemiSyncRequest) error {
	return c.do(ctx, t, http.MethodPost, SemiSyncPath, req, nil)
}

func (c *Client) do(ctx context.Context, t Target, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding the request to %s: %w", t.Instance, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, "https://"+t.Address+path, body)
	if err != nil {
		return fmt.Errorf("building the request to %s: %w", t.Instance, err)
	}
	req.Header.Set("Content-Type", "application/json")
	hc, err := c.clientFor(t)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s at %s within %s: %w", ErrUnreachable, t.Instance, t.Address, c.timeout, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%w: %s: reading the answer: %w", ErrUnreachable, t.Instance, err)
	}
	if resp.StatusCode != http.StatusOK {
		return &HTTPError{Instance: t.Instance, StatusCode: resp.StatusCode, Body: string(bytes.TrimSpace(data))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding the answer of %s: %w", t.Instance, err)
	}
	return nil
}
