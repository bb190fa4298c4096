package check

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Interval is how often Eventually asks again.
const Interval = 100 * time.Millisecond

// Eventually asks cond every Interval until it holds, and fails the test when timeout passes
// first. An error from cond counts as "not yet" (an API server or a mysqld restarting answers
// errors for a while); the last one is in the failure. Each explain adds a diagnostic to the
// failure, such as a component's log.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error), explain ...func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, Interval, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		return ok, nil
	})
	if err == nil {
		return
	}
	msg := what + ": not within " + timeout.String()
	if last != nil {
		msg += " (last error: " + last.Error() + ")"
	}
	for _, e := range explain {
		msg += "\n" + e()
	}
	t.Fatal(msg)
}

// True adapts a condition without a context or an error to Eventually.
func True(cond func() bool) func(context.Context) (bool, error) {
	return func(context.Context) (bool, error) { return cond(), nil }
}
