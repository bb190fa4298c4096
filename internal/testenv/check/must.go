package check

import "testing"

// Must fails the test at once when err is not nil.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Value returns v, failing the test at once when err is not nil.
func Value[T any](t testing.TB, v T, err error) T {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return v
}
