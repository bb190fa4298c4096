package cluster

import (
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

func podsNamed(names ...string) []corev1.Pod {
	var out []corev1.Pod
	for _, n := range names {
		out = append(out, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n, UID: types.UID("uid-" + n)}})
	}
	return out
}

func podNames(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// TestSplitSuspects: which instances are asked with SuspectTimeout rather than the status
// source's own timeout.
func TestSplitSuspects(t *testing.T) {
	for _, tc := range []struct {
		name       string
		unanswered map[types.UID]bool
		overdue    bool
		suspect    []string
	}{
		{"every instance answered and the primary renews: all trusted", nil, false, nil},
		{"a replica whose last ask went unanswered is suspect (it is asked again at every step)",
			map[types.UID]bool{"uid-db-2": true}, false, []string{"db-2"}},
		{"a new Pod of that instance (another UID) starts afresh",
			map[types.UID]bool{"uid-old-db-2": true}, false, nil},
		{"the primary whose Lease renewal is overdue is suspect, before it missed any ask",
			nil, true, []string{"db-1"}},
		{"a primary that missed an ask but still renews its Lease keeps the full timeout: slow is not cut off",
			map[types.UID]bool{"uid-db-1": true}, false, nil},
		{"an overdue renewal makes only the primary suspect",
			map[types.UID]bool{"uid-db-3": true}, true, []string{"db-1", "db-3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trusted, suspect := splitSuspects(podsNamed("db-1", "db-2", "db-3"), tc.unanswered, "db-1", tc.overdue)
			if got := podNames(suspect); !slices.Equal(got, tc.suspect) || len(trusted)+len(suspect) != 3 {
				t.Errorf("suspect %v (trusted %v), want %v", got, podNames(trusted), tc.suspect)
			}
		})
	}
}

// TestUnansweredAsks: a Pod that did not answer is remembered until it answers once.
func TestUnansweredAsks(t *testing.T) {
	var u unansweredAsks
	pods := podsNamed("db-1", "db-2")
	u.note(pods, map[string]*instanceclient.Status{"db-2": {}}, map[string]error{"db-1": errors.New("timeout")}, testNow)
	if got := u.snapshot(); !got["uid-db-1"] || got["uid-db-2"] {
		t.Fatalf("after db-1 did not answer: %v", got)
	}
	u.note(pods, map[string]*instanceclient.Status{"db-1": {}, "db-2": {}}, nil, testNow.Add(time.Second))
	if got := u.snapshot(); len(got) != 0 {
		t.Fatalf("after db-1 answered: %v, want none", got)
	}
	u.note(pods[:1], nil, map[string]error{"db-1": errors.New("timeout")}, testNow)
	u.note(nil, nil, nil, testNow.Add(unansweredForget+time.Second))
	if got := u.snapshot(); len(got) != 0 {
		t.Errorf("a Pod not asked again for %s is still remembered: %v", unansweredForget, got)
	}
}
