package promqlnames

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
)

// Matcher is one label matcher of a selector; Type is "=", "!=", "=~" or "!~".
type Matcher struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Selector is one instant or range vector selector of an expression. Its matchers include the
// __name__ matcher of the metric name.
type Selector struct {
	Metric   string    `json:"metric"`
	Matchers []Matcher `json:"matchers"`
}

// Result is what the parser made of one expression: Error is empty when it parsed.
type Result struct {
	Expr      string     `json:"expr"`
	Error     string     `json:"error,omitempty"`
	Selectors []Selector `json:"selectors,omitempty"`
}

// Parser runs the compiled hack/tools/promql command.
type Parser struct {
	bin string
}

// toolModule is the directory of the tools module, found from this file's location at build time.
func toolModule() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "hack", "tools", "promql")
}

// Build compiles the parser command into dir (the Go toolchain fetches the tools module's
// dependencies through the module proxy on first use).
func Build(ctx context.Context, dir string) (*Parser, error) {
	bin := filepath.Join(dir, "promql")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-o", bin, ".")
	cmd.Dir = toolModule()
	cmd.Env = append(cmd.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the PromQL parser in %s: %w: %s", cmd.Dir, err, out)
	}
	return &Parser{bin: bin}, nil
}

// Parse parses each expression; the results are in the order of exprs.
func (p *Parser) Parse(ctx context.Context, exprs []string) ([]Result, error) {
	var results []Result
	if err := runJSON(ctx, p.bin, exprs, &results, "the parser's results"); err != nil {
		return nil, err
	}
	if len(results) != len(exprs) {
		return nil, fmt.Errorf("the parser answered %d results for %d expressions", len(results), len(exprs))
	}
	return results, nil
}

// runJSON runs bin with in encoded as JSON on its standard input and decodes its standard output
// into out (what names the output in errors).
func runJSON(ctx context.Context, bin string, in, out any, what string) error {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encoding the input of %s: %w", bin, err)
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Stdin = bytes.NewReader(b)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("running %s: %w: %s", bin, err, stderr.String())
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		return fmt.Errorf("decoding %s: %w", what, err)
	}
	return nil
}

// Names returns the metric names the results' selectors read, sorted, each once. A selector
// without an exact metric name (a regular expression on __name__) contributes nothing.
func Names(results ...Result) []string {
	var names []string
	for _, r := range results {
		for _, s := range r.Selectors {
			if s.Metric != "" && !slices.Contains(names, s.Metric) {
				names = append(names, s.Metric)
			}
		}
	}
	slices.Sort(names)
	return names
}

// Matcher returns the selector's matcher of the label name, if it has one.
func (s Selector) Matcher(name string) (Matcher, bool) {
	for _, m := range s.Matchers {
		if m.Name == name {
			return m, true
		}
	}
	return Matcher{}, false
}
