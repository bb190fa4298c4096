package instancemetrics

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestHandlerAuth: the token file is read at each request (a new token works at once, the old
// one no longer), a missing or empty file accepts no token, and a verified client certificate
// needs no token.
func TestHandlerAuth(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "cnm_probe_gauge", Help: "h"}))
	file := filepath.Join(t.TempDir(), "token")
	h := Handler(reg, Auth{TokenFile: file}, nil)
	get := func(token string, verified bool) int {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		if verified {
			r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{}}}}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	rows := []struct {
		name     string
		file     *string
		token    string
		verified bool
		want     int
	}{
		{name: "no token file accepts no token", token: "anything", want: http.StatusUnauthorized},
		{name: "an empty token file accepts no token, not even an empty one", file: ptr(" \n"), token: " ", want: http.StatusUnauthorized},
		{name: "the token of the file is accepted", file: ptr("first\n"), token: "first", want: http.StatusOK},
		{name: "another token is refused", token: "second", want: http.StatusUnauthorized},
		{name: "no credentials are refused", want: http.StatusUnauthorized},
		{name: "a rotated token is taken at once", file: ptr("second"), token: "second", want: http.StatusOK},
		{name: "the old token is refused after rotation", token: "first", want: http.StatusUnauthorized},
		{name: "a verified client certificate needs no token", verified: true, want: http.StatusOK},
	}
	for _, r := range rows {
		if r.file != nil {
			if err := os.WriteFile(file, []byte(*r.file), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if got := get(r.token, r.verified); got != r.want {
			t.Errorf("%s: %d, want %d", r.name, got, r.want)
		}
	}
}

func ptr(s string) *string { return &s }
