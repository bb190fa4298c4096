package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// profileServer fetches a CPU profile of kube-apiserver over d from its /debug/pprof endpoint
// and writes it to path (read it with `go tool pprof`). It runs beside the measured window, so
// the profiler's own small cost is in the window's figures.
func profileServer(ctx context.Context, cfg *rest.Config, d time.Duration, path string) error {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("building an HTTP client for the API server: %w", err)
	}
	return fetchProfile(ctx, hc, strings.TrimSuffix(cfg.Host, "/"), d, path)
}

// profileOperator is profileServer for the operator process, whose metrics server serves pprof.
func profileOperator(ctx context.Context, metricsURL string, d time.Duration, path string) error {
	return fetchProfile(ctx, http.DefaultClient, strings.TrimSuffix(metricsURL, "/metrics"), d, path)
}

func fetchProfile(ctx context.Context, hc *http.Client, base string, d time.Duration, path string) error {
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(d.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("profiling %s: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profiling %s: %s", base, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
