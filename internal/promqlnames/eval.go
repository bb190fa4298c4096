package promqlnames

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// Series is a series the evaluator writes before running the queries: one sample every 15 s
// over the two hours before now, the k-th worth Value + k*Increase, plus the sample's Unix time
// when SinceNow (a timestamp series).
type Series struct {
	Labels   map[string]string `json:"labels"`
	Value    float64           `json:"value"`
	Increase float64           `json:"increase,omitempty"`
	SinceNow bool              `json:"sinceNow,omitempty"`
}

// Query is a query to evaluate: at now when Instant, else over the last hour with a 1 m step.
type Query struct {
	Expr    string `json:"expr"`
	Instant bool   `json:"instant"`
}

// Outcome is what a query returned: its series and samples (NaN not counted), or its error.
type Outcome struct {
	Expr    string `json:"expr"`
	Error   string `json:"error,omitempty"`
	Series  int    `json:"series"`
	Samples int    `json:"samples"`
}

// Evaluator runs the compiled hack/tools/promql/eval command: the Prometheus query engine over
// a temporary TSDB.
type Evaluator struct {
	bin string
}

// BuildEvaluator compiles the evaluator into dir.
func BuildEvaluator(ctx context.Context, dir string) (*Evaluator, error) {
	bin := filepath.Join(dir, "promql-eval")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-o", bin, "./eval")
	cmd.Dir = toolModule()
	cmd.Env = append(cmd.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the PromQL evaluator in %s: %w: %s", cmd.Dir, err, out)
	}
	return &Evaluator{bin: bin}, nil
}

// Evaluate writes the series and runs the queries; the outcomes are in the order of queries.
func (e *Evaluator) Evaluate(ctx context.Context, series []Series, queries []Query) ([]Outcome, error) {
	in := struct {
		Series  []Series `json:"series"`
		Queries []Query  `json:"queries"`
	}{series, queries}
	var outcomes []Outcome
	if err := runJSON(ctx, e.bin, in, &outcomes, "the evaluator's outcomes"); err != nil {
		return nil, err
	}
	if len(outcomes) != len(queries) {
		return nil, fmt.Errorf("the evaluator answered %d outcomes for %d queries", len(outcomes), len(queries))
	}
	return outcomes, nil
}
