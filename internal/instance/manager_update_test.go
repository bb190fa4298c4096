package instance

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

// fakeManagerBinary is an executable that answers --version as the manager does.
func fakeManagerBinary(version string) []byte {
	return []byte("#!/bin/sh\necho 'manager version " + version + "'\n")
}

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestManagerUpdate(t *testing.T) {
	installedBefore := fakeManagerBinary("old")
	next := fakeManagerBinary("next")
	type want struct {
		code      int
		installed []byte // the binary at the installed path afterwards
		replaced  bool
	}
	rows := []struct {
		name     string
		notInit  bool
		ready    string
		body     []byte
		sum      string
		busy     bool
		want     want
		contains string
	}{
		{name: "a checked binary is installed and the program replaced", body: next, sum: sumOf(next),
			want: want{code: 200, installed: next, replaced: true}, contains: `"version":"next"`},
		{name: "a manager that is not its container's init refuses: replacing it would kill mysqld", notInit: true,
			body: next, sum: sumOf(next), want: want{code: 409, installed: installedBefore}, contains: "not the init process"},
		{name: "a bootstrapping instance refuses", ready: "the instance is still bootstrapping", body: next, sum: sumOf(next),
			want: want{code: 409, installed: installedBefore}, contains: "bootstrapping"},
		{name: "a binary whose sha256 differs from the announced one is not installed", body: next, sum: sumOf(installedBefore),
			want: want{code: 400, installed: installedBefore}, contains: "not the " + sumOf(installedBefore)},
		{name: "a request without a sha256 is refused", body: next, sum: "",
			want: want{code: 400, installed: installedBefore}, contains: instanceclient.ManagerSHA256Header},
		{name: "a binary that does not answer as an instance manager is not installed", body: []byte("#!/bin/sh\necho hello\n"),
			sum: sumOf([]byte("#!/bin/sh\necho hello\n")), want: want{code: 400, installed: installedBefore}, contains: "not an instance manager"},
		{name: "a binary that does not run is not installed", body: []byte("\x7fELF garbage"), sum: sumOf([]byte("\x7fELF garbage")),
			want: want{code: 400, installed: installedBefore}, contains: "does not run here"},
		{name: "a second update while one is under way is refused", busy: true, body: next, sum: sumOf(next),
			want: want{code: 409, installed: installedBefore}, contains: "under way"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			prev := namespaceInit
			namespaceInit = func() bool { return !row.notInit }
			t.Cleanup(func() { namespaceInit = prev })
			dir := t.TempDir()
			path := filepath.Join(dir, "manager")
			if err := os.WriteFile(path, installedBefore, 0o755); err != nil {
				t.Fatal(err)
			}
			replaced := make(chan string, 1)
			u := &ManagerUpdate{Binary: &SelfBinary{Path: path}, Ready: func() string { return row.ready },
				Replace: func(p, _ string) error { replaced <- p; select {} }, Clock: clock.RealClock{}, Log: logr.Discard()}
			u.busy.Store(row.busy)
			srv := httptest.NewServer(http.HandlerFunc(u.serve))
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPut, srv.URL, bytes.NewReader(row.body))
			req.Header.Set(instanceclient.ManagerSHA256Header, row.sum)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body bytes.Buffer
			_, _ = body.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != row.want.code || !strings.Contains(body.String(), row.contains) {
				t.Fatalf("answered %d %q, want %d containing %q", resp.StatusCode, body.String(), row.want.code, row.contains)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, row.want.installed) {
				t.Fatalf("installed binary is %q, want %q", got, row.want.installed)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".manager-update-*")); len(left) > 0 {
				t.Fatalf("files left beside the binary: %v", left)
			}
			if row.want.replaced {
				if p := <-replaced; p != path {
					t.Fatalf("replaced the program with %s, want %s", p, path)
				}
				var res instanceclient.ManagerUpdateResult
				if err := json.Unmarshal(body.Bytes(), &res); err != nil || res.SHA256 != sumOf(next) {
					t.Fatalf("answer %q (%v), want the installed sha256 %s", body.String(), err, sumOf(next))
				}
				return
			}
			select {
			case p := <-replaced:
				t.Fatalf("replaced the program with %s after a refusal", p)
			default:
			}
		})
	}
}

func TestWithEnvKeepsOneSettingOfTheKey(t *testing.T) {
	got := withEnv([]string{"A=1", MysqldPIDEnv + "=7", "B=2", MysqldPIDEnv + "=8"}, MysqldPIDEnv, "9")
	want := []string{"A=1", "B=2", MysqldPIDEnv + "=9"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("withEnv = %v, want %v", got, want)
	}
}

func TestInheritedParameters(t *testing.T) {
	t.Setenv(runningParametersEnv, `{"max_connections":"200","table_open_cache_instances":"4"}`)
	got := inheritedParameters(logr.Discard())
	if len(got) != 2 || got["table_open_cache_instances"] != "4" {
		t.Fatalf("inheritedParameters = %v", got)
	}
	if _, set := os.LookupEnv(runningParametersEnv); set {
		t.Fatal("the handed-over parameters stay in the environment of mysqld and later programs")
	}
	t.Setenv(runningParametersEnv, "not json")
	if got := inheritedParameters(logr.Discard()); got != nil {
		t.Fatalf("unreadable parameters read as %v", got)
	}
}
