package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
)

// scraper reads one /metrics endpoint as Prometheus does: HTTPS, a bearer token, the text
// exposition format, gzip, and one kept-alive connection.
type scraper struct {
	client *http.Client
	url    string
	token  string
}

func newScraper(url, token string, tlsConfig *tls.Config) *scraper {
	return &scraper{url: url, token: token, client: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: tlsConfig, MaxIdleConnsPerHost: 1, IdleConnTimeout: 5 * time.Minute}}}
}

// scrape is one response: its size on the wire and as text, and how long it took from the
// request to the last byte.
type scrape struct {
	wire, text int
	took       time.Duration
	body       []byte
}

// once scrapes one time; a status other than 200 is an error.
func (s *scraper) once(ctx context.Context) (scrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return scrape{}, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	// Set explicitly, so the transport hands the compressed body over as it came.
	req.Header.Set("Accept-Encoding", "gzip")
	begin := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return scrape{}, fmt.Errorf("scraping %s: %w", s.url, err)
	}
	defer resp.Body.Close()
	wire, err := io.ReadAll(resp.Body)
	took := time.Since(begin)
	if err != nil {
		return scrape{}, fmt.Errorf("reading %s: %w", s.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return scrape{}, fmt.Errorf("scraping %s: status %d: %s", s.url, resp.StatusCode, bytes.TrimSpace(wire))
	}
	body := wire
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(wire))
		if err != nil {
			return scrape{}, fmt.Errorf("decompressing %s: %w", s.url, err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			return scrape{}, fmt.Errorf("decompressing %s: %w", s.url, err)
		}
	}
	return scrape{wire: len(wire), text: len(body), took: took, body: body}, nil
}

// scrapeStats summarises n scrapes: the sizes and series of the last, the latency of all.
type scrapeStats struct {
	n              int
	wire, text     int
	series         int
	p50, p95, max  time.Duration
	last           []byte
	firstConnected time.Duration // the first scrape, which opened the connection (TLS handshake)
}

// repeat scrapes n times in a row.
func (s *scraper) repeat(ctx context.Context, n int) (scrapeStats, error) {
	var lat []time.Duration
	var st scrapeStats
	// The first scrape opens a connection, with its TLS handshake; the others reuse it.
	s.client.CloseIdleConnections()
	for i := range n {
		sc, err := s.once(ctx)
		if err != nil {
			return st, err
		}
		if i == 0 {
			st.firstConnected = sc.took
		}
		lat = append(lat, sc.took)
		st.wire, st.text, st.last = sc.wire, sc.text, sc.body
	}
	st.n = n
	st.series = countSeries(st.last, "")
	st.p50, st.p95, st.max = percentile(lat, 0.50), percentile(lat, 0.95), percentile(lat, 1)
	return st, nil
}

// countSeries counts the samples of a text exposition whose labels contain label="..." (every
// sample when label is empty): one line per series.
func countSeries(body []byte, label string) int {
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		if label == "" {
			n++
			continue
		}
		_, rest, ok := strings.Cut(line, "{")
		if ok && (strings.HasPrefix(rest, label+`="`) || strings.Contains(rest, `,`+label+`="`)) {
			n++
		}
	}
	return n
}

// seriesByFamily counts the samples by the first word of their metric name (cnm, go, process,
// controller, rest, workqueue, ...).
func seriesByFamily(body []byte) map[string]int {
	out := map[string]int{}
	for line := range strings.SplitSeq(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		family, _, _ := strings.Cut(line, "_")
		family, _, _ = strings.Cut(family, "{")
		family, _, _ = strings.Cut(family, " ")
		out[family]++
	}
	return out
}

// countMetric counts the samples of the metric name (its own lines, not a histogram's _bucket).
func countMetric(body []byte, name string) int {
	n := 0
	for line := range strings.SplitSeq(string(body), "\n") {
		if line == name || strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			n++
		}
	}
	return n
}

// percentile is the nearest-rank q-quantile of ds (q = 1: the maximum); 0 for none.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(rank, 0), len(s)-1)]
}
