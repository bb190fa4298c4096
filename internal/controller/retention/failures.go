package retention

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// failures counts the failed passes in a row of each Cluster, for the backoff. It lives in
// memory: after a restart the first retry comes soon again.
type failures struct {
	mu sync.Mutex
	n  map[types.NamespacedName]int
}

func (f *failures) add(key types.NamespacedName) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[types.NamespacedName]int{}
	}
	f.n[key]++
	return f.n[key]
}

func (f *failures) reset(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.n, key)
}

// after counts a pass of key that ended with err: the failures in a row, 0 after a success.
func (f *failures) after(key types.NamespacedName, err error) int {
	if err == nil {
		f.reset(key)
		return 0
	}
	return f.add(key)
}
