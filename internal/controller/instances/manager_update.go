package instances

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/version"
)

// ManagerBinary is the instance manager binary the operator sends to instances that run another
// one: its own (the operator and the instance manager are one binary).
type ManagerBinary struct {
	Path    string
	Version string
	SHA256  string
	Size    int64
}

// OwnManagerBinary reads the running operator's binary and its sha256.
func OwnManagerBinary() (*ManagerBinary, error) {
	path, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locating the operator's binary: %w", err)
	}
	sum, size, err := instanceclient.BinarySHA256(path)
	if err != nil {
		return nil, fmt.Errorf("reading the operator's binary: %w", err)
	}
	return &ManagerBinary{Path: path, Version: version.Version, SHA256: sum, Size: size}, nil
}

// ManagerUpdater sends an instance manager its new binary, which it installs and replaces its
// running program with, mysqld left running. MTLS implements it.
type ManagerUpdater interface {
	UpdateManager(ctx context.Context, c *v1.Cluster, pod corev1.Pod, bin *ManagerBinary) (*instanceclient.ManagerUpdateResult, error)
}

var _ ManagerUpdater = MTLS{}

// UpdateManager implements ManagerUpdater over mTLS with the operator's client certificate. The
// binary is read from its path for each call; a binary that changed since it was hashed is
// refused by the instance (its sha256 no longer matches).
func (s MTLS) UpdateManager(ctx context.Context, c *v1.Cluster, pod corev1.Pod, bin *ManagerBinary) (*instanceclient.ManagerUpdateResult, error) {
	cl, err := s.client(ctx, c)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(bin.Path)
	if err != nil {
		return nil, fmt.Errorf("opening the instance manager binary: %w", err)
	}
	defer f.Close()
	return cl.UpdateManager(ctx, instanceTarget(pod), f, bin.Size, bin.SHA256)
}
