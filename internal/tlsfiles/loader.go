package tlsfiles

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// DefaultInterval is how often the files are read again at most: a renewed certificate is in use
// at most this long after the kubelet has written it.
const DefaultInterval = 10 * time.Second

// Files are the paths of one mounted kubernetes.io/tls Secret.
type Files struct{ CA, Cert, Key string }

// In returns the files of the Secret mounted at dir: ca.crt, tls.crt and tls.key.
func In(dir string) Files {
	return Files{CA: filepath.Join(dir, "ca.crt"), Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key")}
}

// Material is one loaded version of the files.
type Material struct {
	// Certificate is the key pair, its Leaf parsed.
	Certificate tls.Certificate
	// Roots trusts every CA certificate of the CA file (more than one while a CA is rolled).
	Roots *x509.CertPool
	// Hash identifies the content of the three files.
	Hash [sha256.Size]byte
}

// Loader reads Files, again at most every Interval, and keeps the last material that loaded: files
// caught in the middle of a change (a certificate without its key) are retried at the next check
// while the previous material stays in use. It is safe for concurrent use.
type Loader struct {
	files    Files
	interval time.Duration
	clock    clock.PassiveClock

	mu      sync.Mutex
	cur     *Material
	checked time.Time
	lastErr error
}

// NewLoader loads files once and returns a Loader following them; interval <= 0 means
// DefaultInterval, a nil clk the real clock. It fails when the files do not load now.
func NewLoader(files Files, interval time.Duration, clk clock.PassiveClock) (*Loader, error) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	l := &Loader{files: files, interval: interval, clock: clk}
	if _, err := l.Current(); err != nil {
		return nil, err
	}
	return l, nil
}

// Current returns the material of the files as of at most Interval ago. Once something loaded,
// it never fails: a failed reload keeps the previous material (LastError says why).
func (l *Loader) Current() (*Material, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	if l.cur != nil && now.Sub(l.checked) < l.interval {
		return l.cur, nil
	}
	l.checked = now
	m, err := l.read()
	l.lastErr = err
	if err != nil {
		if l.cur == nil {
			return nil, err
		}
		return l.cur, nil
	}
	l.cur = m
	return m, nil
}

// LastError is why the last check could not load the files, nil when it could.
func (l *Loader) LastError() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastErr
}

// read loads the files, reusing the current material when their content is unchanged.
func (l *Loader) read() (*Material, error) {
	var data [3][]byte
	for i, p := range []string{l.files.CA, l.files.Cert, l.files.Key} {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading TLS material: %w", err)
		}
		data[i] = b
	}
	h := sha256.New()
	for _, b := range data {
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	if l.cur != nil && l.cur.Hash == sum {
		return l.cur, nil
	}
	return Parse(data[0], data[1], data[2], sum)
}

// Parse builds Material from PEM data: every certificate of caPEM is trusted.
func Parse(caPEM, certPEM, keyPEM []byte, hash [sha256.Size]byte) (*Material, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate in the CA data")
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading the certificate and key: %w", err)
	}
	return &Material{Certificate: pair, Roots: pool, Hash: hash}, nil
}
