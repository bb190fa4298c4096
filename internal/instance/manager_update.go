package instance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

// MysqldPIDEnv hands the pid of the running mysqld to the program an in-place update replaces the
// instance manager with (ManagerUpdate): that program supervises it instead of starting one.
const MysqldPIDEnv = "CNM_ADOPT_MYSQLD_PID"

// maxManagerBinary bounds the body of a manager update.
const maxManagerBinary = 512 << 20

// managerCheckTimeout bounds running the new binary once (--version) before it is installed.
const managerCheckTimeout = 10 * time.Second

// ManagerUpdate takes a new instance manager binary from the operator (PUT
// instanceclient.ManagerUpdatePath over the control API's mTLS, operator only) and replaces the
// running instance manager with it in place: the binary is written beside the installed one,
// its sha256 checked against the one the operator sent, run once (--version) to check that it
// runs here, renamed over the installed one, and the process replaces its program with it
// (Replace) after the answer is sent. mysqld, a child of the process, keeps running: the new
// program takes it back (MysqldPIDEnv). Only one update runs at a time.
type ManagerUpdate struct {
	Binary *SelfBinary
	// Ready says why the instance cannot be updated now ("" when it can): still bootstrapping,
	// mysqld not running.
	Ready func() string
	// Replace replaces the program with the binary at path (whose hex sha256 is sum), handing
	// mysqld over; it returns only when it failed.
	Replace func(path, sum string) error
	Clock   clock.Clock
	Log     logr.Logger

	busy atomic.Bool
}

// Identity is what GET /status reports of the running binary; nil for a nil ManagerUpdate.
func (u *ManagerUpdate) Identity() *instanceclient.ManagerIdentity {
	if u == nil {
		return nil
	}
	return u.Binary.Identity()
}

// errUpdateRefused is an update the instance cannot take now, answered 409.
var errUpdateRefused = errors.New("refused")

func (u *ManagerUpdate) serve(w http.ResponseWriter, r *http.Request) {
	if !u.busy.CompareAndSwap(false, true) {
		http.Error(w, "an update of the instance manager is under way", http.StatusConflict)
		return
	}
	installed, err := u.install(w, r)
	if err != nil {
		u.busy.Store(false)
		code := http.StatusBadRequest
		if errors.Is(err, errUpdateRefused) {
			code = http.StatusConflict
		}
		u.Log.Info("manager update refused", "error", err.Error())
		http.Error(w, err.Error(), code)
		return
	}
	writeJSON(w, installed)
	_ = http.NewResponseController(w).Flush()
	u.Log.Info("manager update installed; replacing the program, mysqld keeps running",
		"version", installed.Version, "sha256", installed.SHA256, "previousSHA256", u.Binary.SHA256())
	go func() {
		// The answer is in the socket's buffer: the kernel sends it once execve closes the socket.
		<-u.Clock.After(100 * time.Millisecond)
		err := u.Replace(u.Binary.Path, installed.SHA256)
		u.Log.Error(err, "replacing the program failed; the previous one goes on (the new binary is installed for the next start)")
		u.busy.Store(false)
	}()
}

// install checks the request, writes the binary beside the installed one, checks it and renames
// it into place.
func (u *ManagerUpdate) install(w http.ResponseWriter, r *http.Request) (*instanceclient.ManagerUpdateResult, error) {
	if why := u.Binary.noInPlaceUpdate(); why != "" {
		return nil, fmt.Errorf("%w: %s", errUpdateRefused, why)
	}
	if why := u.Ready(); why != "" {
		return nil, fmt.Errorf("%w: %s", errUpdateRefused, why)
	}
	want := strings.ToLower(r.Header.Get(instanceclient.ManagerSHA256Header))
	if len(want) != sha256.Size*2 {
		return nil, fmt.Errorf("want the binary's hex sha256 in %s", instanceclient.ManagerSHA256Header)
	}
	// The control API's read timeout is for small requests; a binary of tens of MB gets longer.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(u.Clock.Now().Add(instanceclient.ManagerUpdateTimeout))
	_ = rc.SetWriteDeadline(u.Clock.Now().Add(instanceclient.ManagerUpdateTimeout))
	tmp, err := os.CreateTemp(filepath.Dir(u.Binary.Path), ".manager-update-*")
	if err != nil {
		return nil, fmt.Errorf("creating the new binary: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), http.MaxBytesReader(w, r.Body, maxManagerBinary))
	if err == nil {
		err = tmp.Chmod(0o755)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("receiving the new binary: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return nil, fmt.Errorf("the binary received has sha256 %s, not the %s announced", got, want)
	}
	v, err := binaryVersion(r.Context(), tmp.Name())
	if err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), u.Binary.Path); err != nil {
		return nil, fmt.Errorf("installing the new binary: %w", err)
	}
	return &instanceclient.ManagerUpdateResult{Version: v, SHA256: want}, nil
}

// binaryVersion runs path --version and returns the version it prints: a binary that does not
// run here (another architecture, a truncated file) is never installed.
func binaryVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, managerCheckTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := proc.Run(cmd); err != nil {
		return "", fmt.Errorf("the new binary does not run here: %w: %s", err, strings.TrimSpace(out.String()))
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(out.String()), "manager version ")
	if !ok || v == "" || strings.ContainsAny(v, " \n") {
		return "", fmt.Errorf("the new binary is not an instance manager: --version printed %q", out.String())
	}
	return v, nil
}

// withEnv returns env with key set to value, every earlier setting of key removed (the first of
// several settings of a key is the one a Go program reads).
func withEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}
