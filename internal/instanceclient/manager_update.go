package instanceclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// ManagerUpdatePath: PUT with a new instance manager binary as the body; the instance checks it
// against the sha256 in ManagerSHA256Header, installs it in place of the running one and
// replaces its own program with it, keeping mysqld running (an in-place update).
const ManagerUpdatePath = "/manager/update"

// ManagerSHA256Header carries the hex sha256 of the binary a manager update sends.
const ManagerSHA256Header = "X-Manager-Sha256"

// ManagerUpdateTimeout bounds one manager update: sending the binary (tens of MB) and the
// instance's check that it runs. The operator's reconcile waits for it.
const ManagerUpdateTimeout = 30 * time.Second

// BinarySHA256 reads the binary at path and returns its hex sha256 and size: the sum a manager
// update announces and the instance reports.
func BinarySHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// ManagerIdentity is an instance manager's own binary, as GET /status reports it.
type ManagerIdentity struct {
	// Version is the version the binary was built as; SHA256 the hex sha256 of the running
	// binary, empty until computed (a second or so after a start).
	Version string `json:"version"`
	SHA256  string `json:"sha256,omitempty"`
	// InPlaceUpdate says the manager can take a new binary without restarting mysqld;
	// NoInPlaceUpdate says why not when it cannot (the operator then replaces its Pod).
	InPlaceUpdate   bool   `json:"inPlaceUpdate,omitempty"`
	NoInPlaceUpdate string `json:"noInPlaceUpdate,omitempty"`
}

// ManagerUpdateResult is the answer to a manager update: the binary installed, which the
// instance runs once it has replaced its program (a second later).
type ManagerUpdateResult struct {
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// UpdateManager sends binary (size bytes, whose hex sha256 is sum) to t. It returns once the
// instance has checked and installed it; the instance then replaces its program.
func (c *Client) UpdateManager(ctx context.Context, t Target, binary io.Reader, size int64, sum string) (*ManagerUpdateResult, error) {
	ctx, cancel := context.WithTimeout(ctx, ManagerUpdateTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "https://"+t.Address+ManagerUpdatePath, binary)
	if err != nil {
		return nil, fmt.Errorf("building the manager update of %s: %w", t.Instance, err)
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set(ManagerSHA256Header, sum)
	hc, err := c.clientFor(t)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s at %s: sending the manager binary: %w", ErrUnreachable, t.Instance, t.Address, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: reading the answer: %w", ErrUnreachable, t.Instance, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &HTTPError{Instance: t.Instance, StatusCode: resp.StatusCode, Body: string(bytes.TrimSpace(data))}
	}
	var out ManagerUpdateResult
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decoding the answer of %s: %w", t.Instance, err)
	}
	return &out, nil
}
