package helm

import "testing"

// TestLintStrict: `helm lint --strict` passes in both modes (a warning fails it).
func TestLintStrict(t *testing.T) {
	for name, flags := range map[string][]string{
		"cluster-wide":     nil,
		"namespace-scoped": {"--set", "namespaceScoped=true", "--set", "watchNamespaces={apps}"},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := helm(t, append([]string{"lint", "--strict", chartPath, "--namespace", operatorNamespace}, flags...)...)
			if err != nil {
				t.Errorf("helm lint --strict: %v\n%s", err, out)
			}
		})
	}
}
