package instance

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
)

// initParametersFile, inside the data directory, records the values of the initialization-only
// parameters (initOnlyKeys) that data directory was initialized with, as mysqld reported them. It
// goes wherever the data directory goes (a fresh initialization starts without it, a clone or a
// restore brings or rewrites it), and my.cnf always carries these values: a different one would
// keep mysqld from starting ("different lower_case_table_names settings for server and data
// dictionary"), whatever the spec says.
const initParametersFile = restore.InitParametersFile

// isInitOnly reports whether key (any spelling, loose_ prefix included) is an initialization-only
// parameter.
func isInitOnly(key string) bool {
	return initOnlyKeys[strings.TrimPrefix(canonicalKey(key), "loose_")]
}

// readInitParameters reads the record of dataDir; nil when there is none.
func readInitParameters(dataDir string) (map[string]string, error) {
	return restore.ReadInitParameters(dataDir)
}

// recordInitParameters writes the record of dataDir from the running server's values.
func recordInitParameters(ctx context.Context, op mysql.Operator, dataDir string) (map[string]string, error) {
	rec := map[string]string{}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(initOnlyKeys)) {
		v, err := op.GlobalValue(ctx, k)
		if err != nil {
			return nil, err
		}
		rec[k] = v
		b.WriteString(k + "=" + v + "\n")
	}
	if err := writeFileAtomic(filepath.Join(dataDir, initParametersFile), b.String(), 0o600); err != nil {
		return nil, fmt.Errorf("recording the initialization parameters: %w", err)
	}
	return rec, nil
}

// pinInitParameters returns params with every initialization-only parameter replaced by the
// record's value (params as they are without a record).
func pinInitParameters(params, record map[string]string) map[string]string {
	if record == nil {
		return params
	}
	out := map[string]string{}
	for k, v := range params {
		if !isInitOnly(k) {
			out[k] = v
		}
	}
	for k, v := range record {
		out[k] = v
	}
	return out
}

// writeFileAtomic replaces path with text: a temporary file beside it, synced, then renamed, so
// that a reader (mysqld restarted in place reading my.cnf) sees the old file or the new one whole.
func writeFileAtomic(path, text string, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(text); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
