package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
)

// CanonicalParameterKey writes an option name the way mysqld compares them: case-insensitive,
// with dashes and underscores equivalent.
func CanonicalParameterKey(key string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(key)), "-", "_")
}

// CanonicalParameters writes the keys of params canonically; of two spellings of one key, the
// one last in sorted order wins, as in my.cnf, where it is read last.
func CanonicalParameters(params map[string]string) map[string]string {
	out := make(map[string]string, len(params))
	for _, k := range slices.Sorted(maps.Keys(params)) {
		out[CanonicalParameterKey(k)] = params[k]
	}
	return out
}

// ParametersHash identifies spec.mysql.parameters whatever the spelling of their keys: an
// instance reports the hash of the parameters it converged on, and the operator compares it with
// the spec's to know which reports speak of the current spec.
func ParametersHash(params map[string]string) string {
	c := CanonicalParameters(params)
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(c)) {
		h.Write([]byte(k + "=" + c[k] + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// InitOnlyParameters are the parameters mysqld reads only when it initializes a data directory:
// a different value on an existing one makes mysqld refuse to start.
var InitOnlyParameters = map[string]bool{
	"lower_case_table_names": true,
	"innodb_page_size":       true,
	"innodb_data_file_path":  true,
}

// StartArgs are the mysqld options, --key=value, of the keys of params (any spelling, loose_
// prefix included) that are among keys, in the order of keys: what a private server started on
// a restored data directory takes from a Cluster's parameters.
func StartArgs(params map[string]string, keys []string) []string {
	canonical := CanonicalParameters(params)
	var out []string
	for _, k := range keys {
		v, ok := canonical[k]
		if !ok {
			v, ok = canonical["loose_"+k]
		}
		if ok {
			out = append(out, "--"+k+"="+v)
		}
	}
	return out
}
