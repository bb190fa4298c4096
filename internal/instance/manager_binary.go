package instance

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/version"
)

// SelfBinary is the instance manager's own binary: the version it was built as, the sha256 of
// the program that runs (read once, in the background: tens of MB), and whether it can be
// replaced in place (ManagerUpdate). Safe for concurrent use.
type SelfBinary struct {
	// Path is where the binary is installed (the emptyDir the init container copied it into);
	// an update writes the new one there.
	Path string

	mu      sync.Mutex
	sum     string
	hashErr error
}

// managerSHA256Env hands the sha256 the previous program checked the new binary against to the
// program an in-place update runs, so that it reports it from its first answer.
const managerSHA256Env = "CNM_MANAGER_SHA256"

// NewSelfBinary returns the running binary installed at path, with the sha256 the previous
// program handed over (an in-place update), or starts hashing it.
func NewSelfBinary(path string) *SelfBinary {
	b := &SelfBinary{Path: path}
	if sum, ok := os.LookupEnv(managerSHA256Env); ok {
		_ = os.Unsetenv(managerSHA256Env)
		if len(sum) == sha256.Size*2 {
			b.sum = sum
			return b
		}
	}
	go b.hash()
	return b
}

// hash reads the running program (/proc/self/exe: what runs, even once path holds another
// binary) and records its sha256.
func (b *SelfBinary) hash() {
	sum, _, err := instanceclient.BinarySHA256("/proc/self/exe")
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sum, b.hashErr = sum, err
}

func (b *SelfBinary) hashError() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hashErr
}

// SHA256 is the running program's hex sha256, "" until computed.
func (b *SelfBinary) SHA256() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sum
}

// Identity is what GET /status reports of the binary.
func (b *SelfBinary) Identity() *instanceclient.ManagerIdentity {
	id := &instanceclient.ManagerIdentity{Version: version.Version, SHA256: b.SHA256()}
	if why := b.noInPlaceUpdate(); why != "" {
		id.NoInPlaceUpdate = why
	} else {
		id.InPlaceUpdate = true
	}
	return id
}

// noInPlaceUpdate says why the binary cannot be replaced in place, "" when it can.
func (b *SelfBinary) noInPlaceUpdate() string {
	switch {
	case !namespaceInit():
		return "the instance manager is not the init process of its container, so replacing its program would kill mysqld"
	case b.Path == "":
		return "the instance manager does not know where its binary is installed"
	case b.hashError() != nil:
		return "the instance manager could not read its own binary: " + b.hashError().Error()
	case unix.Access(filepath.Dir(b.Path), unix.W_OK) != nil:
		return "the directory of the instance manager's binary, " + filepath.Dir(b.Path) + ", is not writable"
	}
	return ""
}

// namespaceInit is proc.IsNamespaceInit; tests of the update's checks replace it.
var namespaceInit = proc.IsNamespaceInit
