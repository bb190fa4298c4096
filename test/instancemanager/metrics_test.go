package instancemanager

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// scrape GETs n's /metrics over HTTPS, verifying its certificate with the cluster CA, with the
// bearer token (when not empty) and the client certificate (when not nil). It returns the status
// code and the parsed families (nil unless 200), or the transport error.
func scrape(t *testing.T, w *world, n *node, token string, clientCert *certs.KeyPair) (int, map[string]*dto.MetricFamily, error) {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(w.pki.ca.CertPEM)
	cfg := &tls.Config{RootCAs: roots, ServerName: n.host, MinVersion: tls.VersionTLS12}
	if clientCert != nil {
		pair, err := tls.X509KeyPair(clientCert.CertPEM, clientCert.KeyPEM)
		must(t, err)
		cfg.Certificates = []tls.Certificate{pair}
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet,
		"https://"+net.JoinHostPort(n.host, strconv.Itoa(n.metrics))+"/metrics", nil)
	must(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil, nil
	}
	var p expfmt.TextParser
	families, err := p.TextToMetricFamilies(resp.Body)
	must(t, err)
	return resp.StatusCode, families, nil
}

// value is the value of the unlabelled series name in families, and whether it exists.
func value(families map[string]*dto.MetricFamily, name string) (float64, bool) {
	f := families[name]
	if f == nil || len(f.Metric) == 0 {
		return 0, false
	}
	m := f.Metric[0]
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

// testMetricsServed scrapes every instance as Prometheus would: with the Cluster's token, with a
// client certificate of its CA, and without either or with a wrong token or a certificate of
// another CA, which are refused. The figures are those of the running replication.
func testMetricsServed(t *testing.T, w *world) {
	primary := w.nodes["db-1"]
	other := must1(certs.NewCA("another-ca", time.Now()))(t)
	stranger := must1(certs.Issue(other, certs.Request{CommonName: certs.OperatorCommonName, Client: true}, time.Now()))(t)
	for _, name := range []string{"db-1", "db-2", "db-3"} {
		n := w.nodes[name]
		if code, _, err := scrape(t, w, n, "", nil); err != nil || code != http.StatusUnauthorized {
			t.Errorf("%s without credentials: %d, %v; want 401", name, code, err)
		}
		if code, _, err := scrape(t, w, n, "not-the-token", nil); err != nil || code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %d, %v; want 401", name, code, err)
		}
		// A client offers only a certificate of a CA the server names; one of another CA is not
		// sent, or refused in the handshake: either way no metrics.
		if code, _, err := scrape(t, w, n, "", stranger); err == nil && code != http.StatusUnauthorized {
			t.Errorf("%s with a certificate of another CA: %d; want no metrics", name, code)
		}
		if code, fams, err := scrape(t, w, n, "", w.pki.operator); err != nil || code != http.StatusOK || fams["cnm_instance_up"] == nil {
			t.Errorf("%s with a certificate of the cluster CA: %d, %v; want the metrics", name, code, err)
		}
	}
	// The primary's executed set, then each instance's figures once replication has caught up.
	var executed string
	must(t, primary.db.QueryRowContext(t.Context(), "SELECT @@GLOBAL.gtid_executed").Scan(&executed))
	want := must1(gtid.Parse(executed))(t).Count()
	eventually(t, 15*time.Second, "every instance's metrics show the replication caught up", func() bool {
		for _, name := range []string{"db-1", "db-2", "db-3"} {
			code, fams, err := scrape(t, w, w.nodes[name], metricsToken, nil)
			if err != nil || code != http.StatusOK {
				t.Logf("%s: %d, %v", name, code, err)
				return false
			}
			expect := map[string]float64{"cnm_instance_up": 1, "cnm_instance_fenced": 0, "cnm_instance_diverged": 0,
				"cnm_instance_isolated": 0}
			if name == "db-1" {
				expect["cnm_instance_primary"], expect["cnm_instance_writable"], expect["cnm_instance_super_read_only"] = 1, 1, 0
				expect["cnm_replication_configured"], expect["cnm_semisync_source_on"], expect["cnm_semisync_fallen_back"] = 0, 1, 0
				expect["cnm_semisync_acknowledging_replicas"], expect["cnm_semisync_waiting_sessions"] = 2, 0
			} else {
				expect["cnm_instance_primary"], expect["cnm_instance_writable"], expect["cnm_instance_super_read_only"] = 0, 0, 1
				expect["cnm_replication_configured"], expect["cnm_replication_io_running"], expect["cnm_replication_sql_running"] = 1, 1, 1
				expect["cnm_replication_last_error"], expect["cnm_replication_lag_transactions"] = 0, 0
			}
			expect["cnm_gtid_executed_transactions"] = float64(want)
			for metric, v := range expect {
				if got, ok := value(fams, metric); !ok || got != v {
					t.Logf("%s: %s = %v (present %v), want %v (status %s)", name, metric, got, ok, v, w.nodes[name].status(t).GTIDExecuted)
					return false
				}
			}
			for _, metric := range []string{"cnm_mysql_queries_total", "cnm_mysql_threads_connected", "cnm_mysql_max_connections",
				"cnm_mysql_binlog_bytes", "cnm_mysql_uptime_seconds"} {
				if got, ok := value(fams, metric); !ok || got <= 0 {
					t.Logf("%s: %s = %v (present %v), want > 0", name, metric, got, ok)
					return false
				}
			}
			if _, ok := value(fams, "process_cpu_seconds_total"); !ok {
				t.Logf("%s: no process_cpu_seconds_total", name)
				return false
			}
			if f := fams["cnm_certificate_expiry_timestamp_seconds"]; f == nil || len(f.Metric) != 2 {
				t.Logf("%s: certificate expiry series %v, want server and client", name, f)
				return false
			}
		}
		return true
	})
}
