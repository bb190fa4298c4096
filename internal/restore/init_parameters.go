package restore

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// InitParametersFile, inside a data directory, records the values of the initialization-only
// parameters (specs.InitOnlyParameters) it was initialized with; the instance manager writes it.
const InitParametersFile = "cnm-init-parameters"

// ReadInitParameters reads the record of dataDir; nil when there is none.
func ReadInitParameters(dataDir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, InitParametersFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the initialization parameters: %w", err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && specs.InitOnlyParameters[k] {
			out[k] = v
		}
	}
	return out, nil
}

// InitParameterArgs are the mysqld options of dataDir's record, when it has one: the values the
// data was initialized with, which a server started on it must take whatever else it was given.
func InitParameterArgs(dataDir string) ([]string, error) {
	rec, err := ReadInitParameters(dataDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(rec)) {
		out = append(out, "--"+k+"="+rec[k])
	}
	return out, nil
}
