package operator

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/egress"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// TestReconcilersOpenStoresBehindTheGuard: the retention and Backup reconcilers the operator
// registers open object stores through ObjectStoreGuard. An endpoint at the metadata service's
// address, or at a server on 127.0.0.1, is refused before any connection, with the flag that
// allows it in the error; with 127.0.0.1/32 allowed, the request reaches that server.
func TestReconcilersOpenStoresBehindTheGuard(t *testing.T) {
	// The manager is never started: the reconcilers are only built.
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{Scheme: NewScheme(),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "no S3 here", http.StatusServiceUnavailable)
	}))
	defer server.Close()
	local := strings.TrimPrefix(server.URL, "http://")
	cfg := func(endpoint string) objectstore.Config {
		return objectstore.Config{Endpoint: endpoint, Bucket: "backups", Region: "us-east-1", ForcePathStyle: true,
			MaxRetries: 1, Credentials: objectstore.Credentials{AccessKeyID: "AKIAEXAMPLE000000000", SecretAccessKey: "secret"}}
	}
	hint := " (allow with --object-store-allowed-cidrs)"
	openers := map[string]func(Options) func(objectstore.Config) (objectstore.Store, error){
		"retention": func(o Options) func(objectstore.Config) (objectstore.Store, error) {
			open := newRetentionReconciler(mgr, o).OpenStore
			return func(c objectstore.Config) (objectstore.Store, error) { return open(c) }
		},
		"backup": func(o Options) func(objectstore.Config) (objectstore.Store, error) {
			return newBackupReconciler(mgr, o).OpenStore
		},
	}
	allowLocal := Options{ObjectStoreAllowedCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	for name, opener := range openers {
		for _, tc := range []struct {
			rule     string
			opts     Options
			endpoint string
			refusal  string // "": not refused, the request reaches the server
		}{
			{"the metadata service is refused", Options{}, "169.254.169.254:80",
				"object store endpoint 169.254.169.254:80 refused: link-local address" + hint},
			{"loopback is refused", Options{}, local, "object store endpoint " + local + " refused: loopback address" + hint},
			{"the allowance still refuses the metadata service", allowLocal, "169.254.169.254:80",
				"object store endpoint 169.254.169.254:80 refused: link-local address" + hint},
			{"the allowance reaches the server", allowLocal, local, ""},
		} {
			t.Run(name+": "+tc.rule, func(t *testing.T) {
				before := requests.Load()
				store, err := opener(tc.opts)(cfg(tc.endpoint))
				if err != nil {
					t.Fatal(err)
				}
				_, err = store.ListBackups(t.Context(), "db")
				reached := requests.Load() > before
				switch {
				case tc.refusal != "" && (!errors.Is(err, egress.ErrRefused) || !strings.Contains(err.Error(), tc.refusal)):
					t.Errorf("list: %v, want a refusal reading %q", err, tc.refusal)
				case tc.refusal != "" && reached:
					t.Error("the refused request reached the server")
				case tc.refusal == "" && (errors.Is(err, egress.ErrRefused) || !reached):
					t.Errorf("list: %v, want the request to reach the server", err)
				}
			})
		}
	}
}

// TestOpenStoreFailureIsNilStore: a configuration the client refuses gives a nil Store, not a
// nil *Client inside a non-nil Store.
func TestOpenStoreFailureIsNilStore(t *testing.T) {
	store, err := openStore(nil)(objectstore.Config{})
	if err == nil || store != nil {
		t.Errorf("openStore of an empty configuration = %v, %v; want nil and an error", store, err)
	}
}
