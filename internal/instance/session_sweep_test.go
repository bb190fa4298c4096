package instance

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// TestSweepDone: one row per rule of when a sweep of a demoted server's client sessions stops.
func TestSweepDone(t *testing.T) {
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	for _, tc := range []struct {
		rule     string
		state    SweepState
		obs      SweepObservation
		done     bool
		outSince time.Time
	}{
		{"a server that takes writes again stops the sweep at once", SweepState{},
			SweepObservation{Now: at(time.Second), Start: start, Writable: true, Routed: true}, true, time.Time{}},
		{"while a write Service routes to the Pod the sweep goes on", SweepState{},
			SweepObservation{Now: at(30 * time.Second), Start: start, Routed: true}, false, time.Time{}},
		{"routing that cannot be read counts as routed", SweepState{},
			SweepObservation{Now: at(time.Second), Start: start, Unknown: true}, false, time.Time{}},
		{"routed again restarts the settle", SweepState{OutSince: at(time.Second)},
			SweepObservation{Now: at(2900 * time.Millisecond), Start: start, Routed: true}, false, time.Time{}},
		{"routed or unknown for SweepMax stops the sweep", SweepState{},
			SweepObservation{Now: at(SweepMax), Start: start, Unknown: true}, true, time.Time{}},
		{"the first round out of every write Service starts the settle", SweepState{},
			SweepObservation{Now: at(time.Second), Start: start}, false, at(time.Second)},
		{"out for less than SweepSettle: the sweep goes on", SweepState{OutSince: at(time.Second)},
			SweepObservation{Now: at(time.Second + SweepSettle - time.Millisecond), Start: start}, false, at(time.Second)},
		{"out for SweepSettle: the sweep stops", SweepState{OutSince: at(time.Second)},
			SweepObservation{Now: at(time.Second + SweepSettle), Start: start}, true, at(time.Second)},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			s, done, why := SweepDone(tc.state, tc.obs)
			if done != tc.done || !s.OutSince.Equal(tc.outSince) {
				t.Errorf("done %v (%q), out since %s; want done %v, out since %s", done, why, s.OutSince, tc.done, tc.outSince)
			}
			if done && why == "" {
				t.Error("a stop without a reason")
			}
		})
	}
}

// TestSlicesListPod: a Pod is routed by a Service when one of its EndpointSlices lists it, ready
// or not (kube-proxy uses a serving, terminating endpoint when no other is ready).
func TestSlicesListPod(t *testing.T) {
	ep := func(kind, name string, ready bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}, TargetRef: &corev1.ObjectReference{Kind: kind, Name: name},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready}}
	}
	slice := func(eps ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
		return discoveryv1.EndpointSlice{Endpoints: eps}
	}
	for _, tc := range []struct {
		rule   string
		slices []discoveryv1.EndpointSlice
		want   bool
	}{
		{"no slice: not routed", nil, false},
		{"a slice listing the Pod: routed", []discoveryv1.EndpointSlice{slice(ep("Pod", "db-2", true)), slice(ep("Pod", "db-1", true))}, true},
		{"a not-ready endpoint still counts", []discoveryv1.EndpointSlice{slice(ep("Pod", "db-1", false))}, true},
		{"another Pod only: not routed", []discoveryv1.EndpointSlice{slice(ep("Pod", "db-2", true))}, false},
		{"an endpoint of another kind with the same name: not routed", []discoveryv1.EndpointSlice{slice(ep("Node", "db-1", true))}, false},
		{"an endpoint without a target: not routed", []discoveryv1.EndpointSlice{slice(discoveryv1.Endpoint{Addresses: []string{"10.0.0.9"}})}, false},
	} {
		if got := SlicesListPod(tc.slices, "db-1"); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.rule, got, tc.want)
		}
	}
}
