package controller

import (
	"io"
	"strings"
	"testing"
)

// TestAllowedObjectStoresFlag: a value of --object-store-allowed-cidrs that is not a CIDR or an
// address stops the command before it connects to anything, naming the flag and the value.
func TestAllowedObjectStoresFlag(t *testing.T) {
	cmd := NewCommand()
	cmd.SetArgs([]string{"--object-store-allowed-cidrs=127.0.0.1/32,localhost"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	want := `--object-store-allowed-cidrs: "localhost" is neither a CIDR nor an IP address`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("controller with a name in the allowance: %v, want %q", err, want)
	}
}
