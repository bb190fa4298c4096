package plugin

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ansi are the colours `status` uses on a terminal.
var ansi = map[string]string{"red": "\x1b[31m", "green": "\x1b[32m", "yellow": "\x1b[33m"}

// painter colours text when on, and leaves it as it is otherwise (piped output).
func painter(on bool) func(color, text string) string {
	return func(color, text string) string {
		if !on || ansi[color] == "" {
			return text
		}
		return ansi[color] + text + "\x1b[0m"
	}
}

// paintBool writes b, green when it is good (b == good), red otherwise.
func paintBool(paint func(string, string) string, b, good bool) string {
	text := fmt.Sprint(b)
	if b == good {
		return paint("green", text)
	}
	return paint("red", text)
}

// paintYesNo writes a flag that is bad when set: "yes" in red, "no".
func paintYesNo(paint func(string, string) string, b bool) string {
	if b {
		return paint("red", "yes")
	}
	return "no"
}

// countOf writes a transaction count, red when not zero; "-" when not compared.
func countOf(paint func(string, string) string, compared bool, n uint64) string {
	if !compared {
		return "-"
	}
	if n == 0 {
		return "0"
	}
	return paint("red", fmt.Sprint(n))
}

// paintCondition colours a condition's status: True green, False red, Unknown yellow; for the
// conditions whose True is bad (Degraded, OwnershipConflict) the other way round.
func paintCondition(paint func(string, string) string, c metav1.Condition) string {
	good := metav1.ConditionTrue
	if c.Type == "Degraded" || c.Type == "OwnershipConflict" {
		good = metav1.ConditionFalse
	}
	switch c.Status {
	case good:
		return paint("green", string(c.Status))
	case metav1.ConditionUnknown:
		return paint("yellow", string(c.Status))
	}
	return paint("red", string(c.Status))
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
