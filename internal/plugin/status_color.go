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

// boolCell is b, green when it is good (b == good), red otherwise.
func boolCell(b, good bool) cell {
	if b == good {
		return cell{fmt.Sprint(b), "green"}
	}
	return cell{fmt.Sprint(b), "red"}
}

// yesNoCell is a flag that is bad when set: "yes" in red, "no".
func yesNoCell(b bool) cell {
	if b {
		return cell{"yes", "red"}
	}
	return plain("no")
}

// countCell is a transaction count in color when not zero; "-" when not compared.
func countCell(compared bool, n uint64, color string) cell {
	switch {
	case !compared:
		return plain("-")
	case n == 0:
		return plain("0")
	}
	return cell{fmt.Sprint(n), color}
}

// conditionCell colours a condition's status: True green, False red, Unknown yellow; for the
// conditions whose True is bad (Degraded, OwnershipConflict) the other way round.
func conditionCell(c metav1.Condition) cell {
	good := metav1.ConditionTrue
	if c.Type == "Degraded" || c.Type == "OwnershipConflict" {
		good = metav1.ConditionFalse
	}
	switch c.Status {
	case good:
		return cell{string(c.Status), "green"}
	case metav1.ConditionUnknown:
		return cell{string(c.Status), "yellow"}
	}
	return cell{string(c.Status), "red"}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
