// Command dashboardgen writes the Grafana dashboard of cloudnative-mysql,
// config/monitoring/grafana-dashboard.json, with the Grafana Foundation SDK: template variables
// datasource, namespace and cluster, and one row per concern (overview; replication and
// semi-sync; backups and verification; archive and recoverable window; failovers; MySQL). Its
// queries read only the series of the operator and the instance managers, each selector limited
// to $namespace and $cluster. `make manifests` runs it and `make verify-generated` checks that
// the file is fresh; test/monitoring checks every query with the Prometheus parser.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	out := flag.String("out", "config/monitoring/grafana-dashboard.json", "file to write")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "dashboardgen:", err)
		os.Exit(1)
	}
}

func write(out string) error {
	d, err := build()
	if err != nil {
		return fmt.Errorf("building the dashboard: %w", err)
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the dashboard: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, append(data, '\n'), 0o644)
}
