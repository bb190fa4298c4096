package failover

import (
	"testing"
	"time"
)

func TestPrimarySuspected(t *testing.T) {
	overdue := leaseRenewed(t0.Add(-(LeaseRenewInterval + LeaseRenewalSlack + time.Second)))
	for _, tc := range []struct {
		name    string
		changes []change
		want    bool
	}{
		{"suspected: a healthy primary renewing its Lease is not", nil, false},
		{"suspected: a primary whose Pod is being deleted is, though it answers", []change{on("c-1", podDeleting)}, true},
		{"suspected: a primary whose renewal is overdue and that does not answer is", []change{overdue, on("c-1", unreachable)}, true},
		{"suspected: a primary whose renewal is overdue but that answers is not (an API server hiccup)", []change{overdue}, false},
		{"suspected: a primary that does not answer but renews its Lease is not (a busy control API)", []change{on("c-1", unreachable)}, false},
		{"suspected: a primary without a Pod is not (nothing left to route to)", []change{on("c-1", noPod)}, false},
		{"suspected: without the Lease, an unanswering primary is not (its Pod's readiness decides)", []change{leaseOff, on("c-1", unreachable)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := build(tc.changes...)
			if got := PrimarySuspected(o); got != tc.want {
				t.Errorf("PrimarySuspected = %v, want %v", got, tc.want)
			}
			primaryRoutable := false
			for _, l := range RoleLabels(o) {
				if l.Instance == "c-1" {
					primaryRoutable = l.Routable
				}
			}
			if tc.want && primaryRoutable {
				t.Error("a suspected primary stays routable")
			}
		})
	}
}
