package instance

import (
	"strings"
	"testing"
)

// FuzzRenderMyCnf checks that no user parameter, whatever its key and value, can add a line,
// open a section, or change the operator's settings: it is either refused or rendered as exactly
// one "key = value" line before the operator's block, which stays byte for byte the same.
func FuzzRenderMyCnf(f *testing.F) {
	for _, seed := range [][2]string{
		{"max_connections", "100"}, {"server_id", "1"}, {"init_connect", "a#b"}, {"x", "1\nserver_id=2"},
		{"skip-log-bin", ""}, {"[client]", "1"}, {"sql_mode", `a\"b`}, {"loose_super_read_only", "OFF"},
	} {
		f.Add(seed[0], seed[1])
	}
	base, err := RenderMyCnf(baseMyCnfInput())
	if err != nil {
		f.Fatal(err)
	}
	ownedBlock := base.Text[strings.Index(base.Text, "\n# operator-owned\n"):]
	f.Fuzz(func(t *testing.T, key, value string) {
		in := baseMyCnfInput()
		in.Parameters = map[string]string{key: value}
		cnf, err := RenderMyCnf(in)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(cnf.Text, ownedBlock) {
			t.Fatalf("operator block changed by %q=%q:\n%s", key, value, cnf.Text)
		}
		if len(cnf.Refused) == 1 {
			if cnf.Text != base.Text {
				t.Fatalf("refused %q still changed the file:\n%s", key, cnf.Text)
			}
			return
		}
		user := strings.TrimSuffix(cnf.Text, ownedBlock)
		lines := strings.Split(strings.TrimSuffix(user, "\n"), "\n")
		last := lines[len(lines)-1]
		if strings.Count(user, "\n") != strings.Count(base.Text, "\n")-strings.Count(ownedBlock, "\n")+3 ||
			!strings.HasPrefix(last, canonicalKey(key)+" = ") || strings.Contains(user, "\r") {
			t.Fatalf("%q=%q rendered unexpectedly:\n%s", key, value, cnf.Text)
		}
		if reason := ownedReason(key); reason != "" {
			t.Fatalf("owned key %q rendered (%s)", key, reason)
		}
	})
}
