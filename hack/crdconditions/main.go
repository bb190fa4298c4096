// Command crdconditions gives the metav1.Condition schema in every CRD of a directory the bounds
// controller-gen cannot: the type comes from k8s.io/apimachinery, whose fields take no markers of
// this project. Without them the API server admits a lastTransitionTime with a lower-case t or z,
// or an observedGeneration beyond int64, which the operator's informers cannot decode: one such
// status would stop the cache of every object of the kind. `make manifests` runs it after
// controller-gen; it rewrites a file only when something changed, the way controller-gen writes
// it.
//
// Usage: go run ./hack/crdconditions config/crd/bases
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// maxInt64Field is the maximum of every int64 field of this API (see api/v1alpha1/schema_bounds.go).
const maxInt64Field = 9007199254740991

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdconditions <directory of CRDs>")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.yaml"))
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no CRDs in %s", os.Args[1])
	}
	for _, f := range files {
		if err != nil {
			break
		}
		err = rewrite(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crdconditions:", err)
		os.Exit(1)
	}
}

const header = "---\n"

func rewrite(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var crd map[string]any
	if err := yaml.Unmarshal(bytes.TrimPrefix(data, []byte(header)), &crd); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if boundConditions(crd) == 0 {
		return nil
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	out = append([]byte(header), out...)
	if bytes.Equal(out, data) {
		return nil
	}
	return os.WriteFile(path, out, 0o644)
}

// boundConditions sets the bounds on every metav1.Condition schema under node and returns how
// many it found.
func boundConditions(node any) int {
	found := 0
	switch n := node.(type) {
	case map[string]any:
		if isConditionSchema(n) {
			props := n["properties"].(map[string]any)
			props["lastTransitionTime"].(map[string]any)["pattern"] = v1.TimePattern
			props["observedGeneration"].(map[string]any)["maximum"] = maxInt64Field
			found++
		}
		for _, child := range n {
			found += boundConditions(child)
		}
	case []any:
		for _, child := range n {
			found += boundConditions(child)
		}
	}
	return found
}

// isConditionSchema reports whether n is the schema controller-gen writes for metav1.Condition.
func isConditionSchema(n map[string]any) bool {
	props, ok := n["properties"].(map[string]any)
	if !ok || len(props) != 6 {
		return false
	}
	for _, name := range []string{"lastTransitionTime", "message", "observedGeneration", "reason", "status", "type"} {
		if _, ok := props[name].(map[string]any); !ok {
			return false
		}
	}
	return props["lastTransitionTime"].(map[string]any)["format"] == "date-time" &&
		props["observedGeneration"].(map[string]any)["format"] == "int64"
}
