package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/bench/internal/instancenode"
	"github.com/cloudnative-mysql/cloudnative-mysql/bench/internal/procstat"
)

// instanceResult is what the instance part measured.
type instanceResult struct {
	stats     scrapeStats
	cnmSeries int
	up        bool // cnm_instance_up 1 and cnm_instance_primary 1 in the scrapes
	// The manager's CPU over a window without scrapes and one scraped every interval.
	window                  time.Duration
	baselineCPU, scrapedCPU time.Duration
	windowScrapes           int
	notes                   []string
}

// runInstance starts one primary instance manager serving /metrics, writes rows, scrapes it
// o.scrapes times in a row, then measures its CPU over a window without scrapes and one with a
// scrape every o.interval.
func runInstance(ctx context.Context, o options, q quiet) (*instanceResult, error) {
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	w, err := instancenode.Setup(ctx, v1alpha1.ClusterSpec{Instances: 1, MaxSwitchoverDelay: 60,
		Storage: v1alpha1.StorageConfiguration{Size: resource.MustParse("10Gi")}})
	if w != nil {
		defer w.Teardown()
	}
	if err != nil {
		return nil, err
	}
	n, err := w.AddNode(instancenode.ClusterName+"-1", instancenode.Options{MetricsToken: token})
	if err != nil {
		return nil, err
	}
	if err := instancenode.WaitReady(ctx, 5*time.Minute, n); err != nil {
		return nil, fmt.Errorf("%w; the manager's log ends with:\n%s", err, n.LogTail(30))
	}
	if err := writeRows(ctx, n.DB, o.rows); err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(w.PKI.CA.Cert)
	s := newScraper(n.MetricsURL(), token, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
	// The first scrapes wait for the primary's status to be in the metrics.
	if err := waitPrimaryMetrics(ctx, s); err != nil {
		return nil, err
	}
	res := &instanceResult{window: o.window}
	if res.stats, err = s.repeat(ctx, o.scrapes); err != nil {
		return nil, err
	}
	res.cnmSeries = countSeriesPrefixed(res.stats.last, "cnm_")
	res.up = primaryUp(res.stats.last)

	pid := n.Manager.Pid()
	if note := q.wait("the instance manager's CPU windows"); note != "" {
		res.notes = append(res.notes, note)
	}
	if res.baselineCPU, _, err = cpuWindow(ctx, pid, o.window, 0, nil); err != nil {
		return nil, err
	}
	if note := q.during("the window without scrapes"); note != "" {
		res.notes = append(res.notes, note)
	}
	if res.scrapedCPU, res.windowScrapes, err = cpuWindow(ctx, pid, o.window, o.interval, s); err != nil {
		return nil, err
	}
	if note := q.during("the scraped window"); note != "" {
		res.notes = append(res.notes, note)
	}
	return res, nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeRows gives the primary a table of rows, so that its counters are those of a server that
// has written something.
func writeRows(ctx context.Context, db *sql.DB, rows int) error {
	for _, st := range []string{
		"CREATE DATABASE IF NOT EXISTS bench",
		"CREATE TABLE IF NOT EXISTS bench.t (id INT AUTO_INCREMENT PRIMARY KEY, k INT, pad VARCHAR(200))",
	} {
		if _, err := db.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("%s: %w", st, err)
		}
	}
	// Batches of 500 stay below mysqld's default cte_max_recursion_depth (1000).
	for done := 0; done < rows; done += 500 {
		_, err := db.ExecContext(ctx, "INSERT INTO bench.t (k, pad) WITH RECURSIVE s(n) AS "+
			"(SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ?) SELECT FLOOR(RAND()*1000000), REPEAT(UUID(), 5) FROM s",
			min(500, rows-done))
		if err != nil {
			return fmt.Errorf("writing rows: %w", err)
		}
	}
	return nil
}

// waitPrimaryMetrics scrapes until the instance reports itself up and primary.
func waitPrimaryMetrics(ctx context.Context, s *scraper) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		sc, err := s.once(ctx)
		if err == nil && primaryUp(sc.body) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the instance's metrics did not show it up and primary within 2 minutes (last error: %v)", err)
		}
		time.Sleep(time.Second)
	}
}

// primaryUp: the exposition holds cnm_instance_up 1 and cnm_instance_primary 1.
func primaryUp(body []byte) bool {
	text := "\n" + string(body)
	return strings.Contains(text, "\ncnm_instance_up 1\n") && strings.Contains(text, "\ncnm_instance_primary 1\n")
}

// countSeriesPrefixed counts the samples whose metric name starts with prefix.
func countSeriesPrefixed(body []byte, prefix string) int {
	n := 0
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, prefix) {
			n++
		}
	}
	return n
}

// cpuWindow is the CPU time pid used over window; with a scraper, scraped at the start and every
// interval after it (the scrapes it made are counted).
func cpuWindow(ctx context.Context, pid int, window, interval time.Duration, s *scraper) (time.Duration, int, error) {
	c0, err := procstat.CPUTime(pid)
	if err != nil {
		return 0, 0, err
	}
	end := time.Now().Add(window)
	scrapes := 0
	for next := time.Now(); ; next = next.Add(interval) {
		if s == nil || !next.Before(end) {
			time.Sleep(time.Until(end))
			break
		}
		time.Sleep(time.Until(next))
		if _, err := s.once(ctx); err != nil {
			return 0, scrapes, err
		}
		scrapes++
	}
	c1, err := procstat.CPUTime(pid)
	if err != nil {
		return 0, scrapes, fmt.Errorf("the instance manager is gone: %w", err)
	}
	return c1 - c0, scrapes, nil
}
