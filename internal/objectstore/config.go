package objectstore

import (
	"crypto/x509"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

const (
	// DefaultPartSize is the multipart part size when Config.PartSize is zero. UploadBackup holds
	// two parts in memory; with 10,000 parts at most, an archive can reach 156 GiB.
	DefaultPartSize = 16 << 20
	// MinPartSize is the smallest part S3 accepts (except for the last part).
	MinPartSize = 5 << 20
	// MaxPartSize is the largest part S3 accepts.
	MaxPartSize = 5 << 30
	// MaxParts is the largest part count of one multipart upload.
	MaxParts = 10000

	awsEndpoint   = "s3.amazonaws.com"
	defaultRegion = "us-east-1"
)

// Config is what a Client needs, resolved from a Cluster's object store configuration and the
// Secrets it references.
type Config struct {
	Endpoint       string // host[:port], no scheme
	Secure         bool   // https
	Region         string
	Bucket         string
	Path           string // key prefix without leading or trailing slash; may be empty
	ForcePathStyle bool
	CABundle       []byte // PEM certificates that sign the endpoint's certificate; empty: system roots
	Credentials    Credentials

	// PartSize of multipart uploads; 0 means DefaultPartSize. It bounds the memory of an upload
	// (two parts) and the archive size (MaxParts parts).
	PartSize int64
	// MaxRetries is how many times a request is attempted: 0 keeps minio-go's default (10),
	// 1 disables retries.
	MaxRetries int
}

// EndpointURL returns the endpoint with its scheme, as recorded in a Backup's status.
func (c Config) EndpointURL() string {
	if c.Secure {
		return "https://" + c.Endpoint
	}
	return "http://" + c.Endpoint
}

// Credentials is an S3 access key pair and optional session token. It formats as "[redacted]"
// with every fmt verb and in JSON, so a Config can be logged without leaking it.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

const redacted = "[redacted]"

// Format implements fmt.Formatter: every verb prints "[redacted]".
func (Credentials) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// String implements fmt.Stringer.
func (Credentials) String() string { return redacted }

// GoString implements fmt.GoStringer.
func (Credentials) GoString() string { return redacted }

// MarshalJSON never exposes the credentials.
func (Credentials) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// SecretValues are the values read from the Secrets an ObjectStoreConfiguration references.
type SecretValues struct {
	Credentials Credentials
	EndpointCA  []byte // PEM, when the configuration names an endpoint CA
}

// ResolveConfig turns a Cluster's object store configuration and the Secret values it references
// into a Config. It does no I/O. Errors name fields, never secret values.
func ResolveConfig(store *v1alpha1.ObjectStoreConfiguration, secrets SecretValues) (Config, error) {
	if store == nil {
		return Config{}, fmt.Errorf("%w: no object store configuration", ErrInvalid)
	}
	if store.Bucket == "" {
		return Config{}, fmt.Errorf("%w: object store bucket is empty", ErrInvalid)
	}
	cfg := Config{
		Bucket:         store.Bucket,
		Region:         store.Region,
		ForcePathStyle: store.ForcePathStyle,
		Credentials:    secrets.Credentials,
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	var err error
	if cfg.Path, err = normalizePath(store.Path); err != nil {
		return Config{}, err
	}
	if cfg.Endpoint, cfg.Secure, err = parseEndpoint(store.Endpoint); err != nil {
		return Config{}, err
	}
	if cfg.Credentials.AccessKeyID == "" || cfg.Credentials.SecretAccessKey == "" {
		return Config{}, fmt.Errorf("%w: object store credentials: access key id or secret access key is empty", ErrInvalid)
	}
	if store.EndpointCA != nil {
		if !cfg.Secure {
			return Config{}, fmt.Errorf("%w: endpointCA is set but endpoint %q is not https", ErrInvalid, store.Endpoint)
		}
		if err := checkCABundle(secrets.EndpointCA); err != nil {
			return Config{}, err
		}
		cfg.CABundle = secrets.EndpointCA
	}
	return cfg, nil
}

// normalizePath trims slashes around a key prefix and refuses empty, "." and ".." segments.
func normalizePath(path string) (string, error) {
	path = strings.Trim(path, "/")
	if path == "" {
		return "", nil
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", fmt.Errorf("%w: object store path %q has an empty, \".\" or \"..\" segment", ErrInvalid, path)
		}
	}
	return path, nil
}

// parseEndpoint returns host[:port] and whether to use TLS; an empty endpoint means AWS S3.
func parseEndpoint(endpoint string) (string, bool, error) {
	if endpoint == "" {
		return awsEndpoint, true, nil
	}
	if i := strings.LastIndex(endpoint, "@"); i >= 0 {
		return "", false, fmt.Errorf("%w: object store endpoint %q: credentials go in a Secret, not in the URL",
			ErrInvalid, "[redacted]"+endpoint[i:])
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", false, fmt.Errorf("%w: object store endpoint %q: %w", ErrInvalid, endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", false, fmt.Errorf("%w: object store endpoint %q: scheme must be http or https", ErrInvalid, endpoint)
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false, fmt.Errorf("%w: object store endpoint %q: want scheme://host[:port] only", ErrInvalid, endpoint)
	}
	return u.Host, u.Scheme == "https", nil
}

func checkCABundle(pem []byte) error {
	if len(pem) == 0 {
		return fmt.Errorf("%w: endpointCA is empty", ErrInvalid)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return fmt.Errorf("%w: endpointCA holds no PEM certificate", ErrInvalid)
	}
	return nil
}

func (c Config) partSize() int64 {
	if c.PartSize == 0 {
		return DefaultPartSize
	}
	return c.PartSize
}

// validate checks what ResolveConfig guarantees, for Configs built by hand.
func (c Config) validate() error {
	switch {
	case c.Endpoint == "" || strings.Contains(c.Endpoint, "/"):
		return fmt.Errorf("%w: endpoint %q: want host[:port]", ErrInvalid, c.Endpoint)
	case c.Bucket == "":
		return fmt.Errorf("%w: bucket is empty", ErrInvalid)
	case c.Credentials.AccessKeyID == "" || c.Credentials.SecretAccessKey == "":
		return fmt.Errorf("%w: access key id or secret access key is empty", ErrInvalid)
	case c.partSize() < MinPartSize || c.partSize() > MaxPartSize:
		return fmt.Errorf("%w: part size %d is outside [%d, %d]", ErrInvalid, c.partSize(), MinPartSize, MaxPartSize)
	}
	if _, err := normalizePath(c.Path); err != nil || strings.Trim(c.Path, "/") != c.Path {
		return fmt.Errorf("%w: path %q: want no leading or trailing slash and no empty segment", ErrInvalid, c.Path)
	}
	if len(c.CABundle) > 0 {
		return checkCABundle(c.CABundle)
	}
	return nil
}
