package plugin

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// TestPasswordGoesFirstOnStdin: piped, the password line comes first, then the user's input.
func TestPasswordGoesFirstOnStdin(t *testing.T) {
	in, _, _ := withPassword([]byte("pw'x"), strings.NewReader("SELECT 1;\n"), io.Discard, false)
	b, err := io.ReadAll(in)
	if err != nil || string(b) != "pw'x\nSELECT 1;\n" {
		t.Errorf("stdin %q, %v", b, err)
	}
}

// TestPasswordWaitsForTheEchoOffPrompt: on a terminal nothing is sent before the remote shell
// prints its prompt byte (echo off); the byte never reaches the user's terminal.
func TestPasswordWaitsForTheEchoOffPrompt(t *testing.T) {
	var screen bytes.Buffer
	in, out, _ := withPassword([]byte("secret"), strings.NewReader("quit\n"), &screen, true)
	got := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(in); got <- b }()
	if _, err := out.Write([]byte("before ")); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		t.Fatalf("stdin sent %q before the prompt", b)
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := out.Write([]byte{passwordPrompt, 'm', 'y', 's', 'q', 'l', '>'}); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "secret\nquit\n" {
		t.Errorf("stdin %q", b)
	}
	if screen.String() != "before mysql>" {
		t.Errorf("the terminal shows %q", screen.String())
	}
}

// TestMySQLCommandKeepsArgumentsOutOfTheScript: the user's arguments reach mysql as the shell's
// positional parameters, never spliced into the script.
func TestMySQLCommandKeepsArgumentsOutOfTheScript(t *testing.T) {
	cmd := MySQLCommand(false, []string{"-e", "SELECT '$(reboot)'"})
	if len(cmd) != 6 || cmd[0] != "sh" || cmd[4] != "-e" || cmd[5] != "SELECT '$(reboot)'" || strings.Contains(cmd[2], "reboot") {
		t.Errorf("command %q", cmd)
	}
}
