package failover

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// bytesReader hands out fuzz input a little at a time; past its end it yields zeros.
type bytesReader struct {
	b []byte
	i int
}

func (r *bytesReader) next() byte {
	if r.i >= len(r.b) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}
func (r *bytesReader) flag() bool   { return r.next()&1 == 1 }
func (r *bytesReader) n(m int) int  { return int(r.next()) % m }
func (r *bytesReader) likely() bool { return r.n(4) != 0 }
func (r *bytesReader) gset() gtid.Set {
	// Up to two sources with prefixes 1-n of short ranges: sets that are often comparable, and
	// sometimes not.
	s := gtid.Set{}
	if n := r.n(6); n > 0 {
		s = union(s, a(fmt.Sprintf("1-%d", n)))
	}
	if r.n(4) == 0 {
		s = union(s, b(fmt.Sprintf("%d", 1+r.n(2))))
	}
	return s
}

// observationFrom builds an arbitrary Observation of two to four instances.
func observationFrom(data []byte) Observation {
	r := &bytesReader{b: data}
	names := []string{"c-1", "c-2", "c-3", "c-4"}[:2+r.n(3)]
	pick := func() string {
		if r.n(8) == 0 {
			return "" // sometimes nobody, or someone unknown
		}
		return names[r.n(len(names))]
	}
	o := Observation{
		Now: t0,
		Spec: Spec{Instances: int32(len(names)), FailoverDelay: time.Duration(r.n(3)) * 10 * time.Second,
			MaxSwitchoverDelay: time.Minute, EnablePrimaryLease: r.n(4) != 0, SemiSync: r.flag()},
		Status: Status{CurrentPrimary: pick(), TargetPrimary: pick(),
			TargetPrimaryTimestamp: t0.Add(-time.Duration(r.n(120)) * time.Second),
			SemiSyncFallenBack:     r.flag()},
	}
	if r.flag() {
		o.Status.PrimaryFailingSince = t0.Add(-time.Duration(r.n(60)) * time.Second)
	}
	if r.flag() {
		o.Status.CurrentPrimaryTimestamp = t0.Add(-time.Duration(r.n(120)) * time.Second)
	}
	for _, n := range names {
		if r.n(5) == 0 {
			o.Status.Fenced = append(o.Status.Fenced, n)
		}
		if r.n(5) == 0 {
			o.Status.Diverged = append(o.Status.Diverged, n)
		}
	}
	if r.flag() {
		renewed := t0.Add(-time.Duration(r.n(30)) * time.Second)
		o.Lease = Lease{Exists: true, Holder: pick(), RenewTime: renewed, ObservedAt: renewed, TTL: LeaseTTL}
	}
	for _, n := range names {
		in := Instance{Name: n, PodExists: r.n(6) != 0, PodReady: r.likely(), PodDeleting: r.n(5) == 0,
			Reachable: r.n(4) != 0}
		if in.Reachable {
			in.Role = v1.RoleReplica
			switch r.n(5) {
			case 0: // writable
				in.Role = v1.RolePrimary
			case 1, 2, 3:
				in.ReadOnly, in.SuperReadOnly = true, true
			default:
				in.ReadOnly, in.SuperReadOnly = true, r.flag()
			}
			in.Executed = r.gset()
			in.Retrieved = union(in.Executed, r.gset())
			if r.likely() {
				in.Replication = &Replication{Source: pick(), IORunning: r.likely(), SQLRunning: r.likely()}
				if r.n(4) == 0 {
					in.Replication.SQLLastError = "Error 1062"
				}
			}
		}
		o.Instances = append(o.Instances, in)
	}
	return o
}

// FuzzDecideSafety: whatever it observes, Decide never lets an instance become writable while
// another is seen accepting writes, or while the old primary may still write (its Lease live
// and it not seen read-only; without the Lease, not seen read-only and its Pod not deleted);
// never promotes a fenced or diverged instance, one missing transactions a replica holds, or any
// while a semi-sync participant did not answer; never
// aborts a switchover whose target may have promoted; and every wait ends in the future.
func FuzzDecideSafety(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte{255, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		o := observationFrom(data)
		d := Decide(o)
		if err := checkSafety(o, d); err != nil {
			t.Fatalf("%v\ndecision %s/%s %q %v: %s\nobservation %+v", err, d.Kind, d.Step, d.Instance, d.Instances, d.Reason, o)
		}
	})
}

// TestDecideSafetySweep checks the fuzz invariants on a fixed sweep of generated observations, so
// a plain go test exercises them too (the table rows are checked in check).
func TestDecideSafetySweep(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		data := make([]byte, 64)
		rng.Read(data)
		o := observationFrom(data)
		if d := Decide(o); checkSafety(o, d) != nil {
			t.Fatalf("input %x: %v", data, checkSafety(o, d))
		}
	}
}

func checkSafety(o Observation, d Decision) error {
	if d.Kind == Wait && !d.Until.After(o.Now) {
		return fmt.Errorf("a wait until %s is not after now", d.Until)
	}
	if d.Kind != Switchover && d.Kind != Failover && d.Step != NoStep && d.Step != StepAbortSwitchover {
		return fmt.Errorf("kind %s carries step %s", d.Kind, d.Step)
	}
	switch d.Step {
	case StepPromote, StepSetTargetPrimary:
		return checkPromotion(o, d)
	case StepAbortSwitchover:
		t, seen := o.instance(o.Status.TargetPrimary)
		if seen && t.SeenWritable() {
			return fmt.Errorf("abort while the target %s is seen writable", t.Name)
		}
		if seen && o.Spec.EnablePrimaryLease && !LeaseExpired(o.Lease, o.Now) && o.Lease.Holder == t.Name {
			return fmt.Errorf("abort while the target %s holds the Lease", t.Name)
		}
		if seen && !o.Spec.EnablePrimaryLease && t.PodExists && !t.SeenReadOnly() {
			return fmt.Errorf("abort without the Lease while the target %s is not seen read-only", t.Name)
		}
	}
	return nil
}

func checkPromotion(o Observation, d Decision) error {
	promoted := d.Instance
	if promoted == "" || o.fenced(promoted) || o.diverged(promoted) {
		return fmt.Errorf("promotes %q, fenced or diverged or nobody", promoted)
	}
	for _, in := range o.Instances {
		if in.Name != promoted && in.SeenWritable() {
			return fmt.Errorf("promotes %s while %s is seen writable: two writers", promoted, in.Name)
		}
	}
	old, seen := o.instance(o.Status.CurrentPrimary)
	if old.Name != promoted && seen && !old.SeenReadOnly() {
		leaseSafe := o.Spec.EnablePrimaryLease && !LeaseLiveFor(o.Lease, promoted, o.Now)
		podGone := !old.PodExists || old.PodDeleting
		switch {
		case o.Spec.EnablePrimaryLease && !leaseSafe:
			return fmt.Errorf("promotes %s while the Lease (holder %q) is live and %s is not seen read-only", promoted, o.Lease.Holder, old.Name)
		case !o.Spec.EnablePrimaryLease && d.Step == StepPromote:
			return fmt.Errorf("switchover without the Lease promotes %s while %s is not seen read-only", promoted, old.Name)
		case !o.Spec.EnablePrimaryLease && !podGone:
			return fmt.Errorf("failover without the Lease promotes %s while %s's Pod is not deleted", promoted, old.Name)
		}
	}
	if d.Step == StepSetTargetPrimary {
		cand, _ := o.instance(promoted)
		if !cand.Drained() {
			return fmt.Errorf("promotes %s before it applied its relay log", promoted)
		}
		for _, in := range o.Instances {
			if in.Name == promoted || in.Name == o.Status.CurrentPrimary || !in.Reachable || o.diverged(in.Name) {
				continue
			}
			if !cand.History().Contains(in.History()) {
				return fmt.Errorf("promotes %s while %s holds transactions it lacks", promoted, in.Name)
			}
		}
		for _, in := range o.Instances {
			if o.Spec.SemiSync && !in.Reachable && in.Name != promoted && in.Name != o.Status.CurrentPrimary &&
				!o.fenced(in.Name) && !o.diverged(in.Name) {
				return fmt.Errorf("promotes %s while the semi-sync participant %s, which may hold acknowledged writes, did not answer", promoted, in.Name)
			}
		}
	}
	return nil
}
