package protection

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestExpiredBackups(t *testing.T) {
	now := created.Add(10 * day)
	running := v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "running"}, Status: v1.BackupStatus{Phase: v1.BackupPhaseRunning}}
	deleting := completed("deleting", 2*day)
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	superseded := failed("superseded", 2*day, "")
	superseded.Status.Phase = v1.BackupPhaseSuperseded
	all := []v1.Backup{completed("old", day), completed("pinned", day), failed("failed-old", 2*day, "x"), superseded,
		completed("newest", 3*day), failed("failed-fresh", 10*day-time.Hour, "y"), running, deleting}
	for _, tc := range []struct {
		rule string
		ttl  time.Duration
		want []string
	}{
		{rule: "no TTL: nothing is deleted", ttl: 0},
		{rule: "finished longer ago than the TTL go, oldest first, failed and superseded included; the newest completed, a recovery source, unfinished, fresh and already deleted ones stay",
			ttl: 24 * time.Hour, want: []string{"old", "failed-old", "superseded"}},
		{rule: "a TTL longer than every age: nothing", ttl: 30 * day},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var got []string
			for _, b := range expiredBackups(now, tc.ttl, all, map[string]bool{"pinned": true}) {
				got = append(got, b.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
