package chaos

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func ms(n int) *time.Duration { d := time.Duration(n) * time.Millisecond; return &d }

func obs(inst string, ms int, state string) Observation {
	o := Observation{Instance: inst, At: at(ms), OK: state != "miss", ReadOnly: state == "ro", Server: inst + "-uuid"}
	return o
}

func TestDoubleWritables(t *testing.T) {
	tests := []struct {
		name string
		obs  []Observation
		want []DoubleWritable
	}{
		{
			name: "a clean switchover: the old primary read-only before the new one writable",
			obs: []Observation{obs("a", 0, "rw"), obs("a", 100, "rw"), obs("a", 200, "ro"),
				obs("b", 50, "ro"), obs("b", 150, "ro"), obs("b", 250, "rw"), obs("b", 350, "rw")},
		},
		{
			name: "overlapping writable runs are reported over their overlap",
			obs: []Observation{obs("a", 0, "rw"), obs("a", 100, "rw"), obs("a", 200, "rw"), obs("a", 300, "ro"),
				obs("b", 150, "rw"), obs("b", 250, "rw")},
			want: []DoubleWritable{{Span{at(150), at(200)}, []string{"a", "b"}}},
		},
		{
			name: "a miss ends a writable run: unknown is not counted as writable",
			obs: []Observation{obs("a", 0, "rw"), obs("a", 100, "miss"), obs("a", 200, "miss"),
				obs("b", 150, "rw"), obs("b", 250, "rw")},
		},
		{
			name: "two instances seen writable at the same instant",
			obs:  []Observation{obs("a", 100, "rw"), obs("b", 100, "rw")},
			want: []DoubleWritable{{Span{at(100), at(100)}, []string{"a", "b"}}},
		},
		{
			name: "read-only replicas beside one primary",
			obs: []Observation{obs("a", 0, "rw"), obs("a", 100, "rw"), obs("b", 0, "ro"), obs("b", 100, "ro"),
				obs("c", 0, "ro"), obs("c", 100, "ro")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DoubleWritables(tt.obs)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if !got[i].From.Equal(tt.want[i].From) || !got[i].To.Equal(tt.want[i].To) || !slices.Equal(got[i].Instances, tt.want[i].Instances) {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestHandoverGaps(t *testing.T) {
	got := HandoverGaps([]Observation{obs("a", 0, "rw"), obs("a", 100, "rw"), obs("a", 200, "ro"),
		obs("b", 450, "rw"), obs("b", 550, "rw"), obs("b", 650, "miss"), obs("b", 750, "rw")})
	if !slices.Equal(got, []time.Duration{350 * time.Millisecond}) {
		t.Fatalf("gaps %v, want [350ms] (b's two runs are one instance)", got)
	}
}

func ack(id int64, msAt int, server string) Ack { return Ack{ID: id, At: at(msAt), Server: server} }

func TestMeasureWrites(t *testing.T) {
	tests := []struct {
		name     string
		acks     []Ack
		fault    int
		until    int
		rto, gap *time.Duration
		handover *time.Duration
		lateOld  int
	}{
		{
			name: "the same primary comes back: no handover",
			acks: []Ack{ack(1, 900, "A"), ack(2, 1000, "A"), ack(3, 5000, "A")}, fault: 1000, until: 9000,
			rto: ms(4000), gap: ms(4000),
		},
		{
			name: "a switchover: handover from the old primary's last write to the new one's first",
			acks: []Ack{ack(1, 900, "A"), ack(2, 1200, "A"), ack(3, 2500, "B"), ack(4, 2600, "B")}, fault: 1000, until: 9000,
			rto: ms(1500), gap: ms(1300), handover: ms(1300),
		},
		{
			name: "the old primary acknowledging after the new one's first write is counted",
			acks: []Ack{ack(1, 900, "A"), ack(2, 2000, "B"), ack(3, 2100, "A"), ack(4, 2200, "B")}, fault: 1000, until: 9000,
			rto: ms(1000), gap: ms(1100), handover: ms(1100), lateOld: 1,
		},
		{
			name: "the primary acknowledges until its shutdown, then the outage: the RTO ends with it",
			acks: []Ack{ack(1, 900, "A"), ack(2, 1100, "A"), ack(3, 1200, "A"), ack(4, 6200, "A"), ack(5, 6300, "A")}, fault: 1000, until: 9000,
			rto: ms(5200), gap: ms(5000),
		},
		{
			name: "no write after the fault within its window",
			acks: []Ack{ack(1, 900, "A"), ack(2, 9500, "A")}, fault: 1000, until: 9000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := MeasureWrites(tt.acks, at(tt.fault), at(tt.until))
			eq := func(what string, got, want *time.Duration) {
				if (got == nil) != (want == nil) || got != nil && *got != *want {
					t.Errorf("%s = %s, want %s", what, dur(got), dur(want))
				}
			}
			eq("rto", w.RTO, tt.rto)
			eq("gap", w.Gap, tt.gap)
			eq("handover", w.Handover, tt.handover)
			if w.LateOld != tt.lateOld {
				t.Errorf("lateOld = %d, want %d", w.LateOld, tt.lateOld)
			}
		})
	}
}

func TestMeasureReads(t *testing.T) {
	reads := []Read{{At: at(0), OK: true}, {At: at(100), OK: true}, {At: at(200)}, {At: at(300)},
		{At: at(400), OK: true}, {At: at(500), OK: true}, {At: at(2000), OK: true}}
	got := MeasureReads(reads, at(50), at(600))
	if got.Reads != 5 || got.OK != 3 || got.LongestGap != 300*time.Millisecond {
		t.Fatalf("got %+v, want 5 reads, 3 ok, longest gap 300ms", got)
	}
	if none := MeasureReads(nil, at(0), at(1000)); none.Fraction() != 1 || none.LongestGap != time.Second {
		t.Fatalf("no reads: %+v", none)
	}
}

func TestMissing(t *testing.T) {
	acks := []Ack{{ID: 1}, {ID: 2}, {ID: 3}}
	if got := Missing(acks, map[int64]bool{1: true, 3: true, 4: true}); !slices.Equal(got, []int64{2}) {
		t.Fatalf("missing %v, want [2]", got)
	}
}

func TestQuantile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Second)
	}
	q := Quantile(ds)
	if q.N != 100 || q.P50 != 50*time.Second || q.P99 != 99*time.Second || q.Max != 100*time.Second {
		t.Fatalf("got %+v", q)
	}
	if one := Quantile([]time.Duration{3 * time.Second}); one.P50 != 3*time.Second || one.P99 != 3*time.Second {
		t.Fatalf("one sample: %+v", one)
	}
	if Quantile(nil).N != 0 {
		t.Fatal("empty sample")
	}
}

func TestParseKinds(t *testing.T) {
	got, err := ParseKinds("pod-delete, switchover")
	if err != nil || !slices.Equal(got, []Kind{PodDelete, Switchover}) {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := ParseKinds("pod-delete,reboot"); err == nil {
		t.Fatal("an unknown kind is accepted")
	}
}

func TestSwitchoverTarget(t *testing.T) {
	pods := func(names ...string) []corev1.Pod {
		var out []corev1.Pod
		for _, n := range names {
			out = append(out, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
		return out
	}
	for primary, want := range map[string]string{"db-1": "db-2", "db-2": "db-3", "db-3": "db-1"} {
		if got := switchoverTarget(primary, pods("db-1", "db-2", "db-3")); got != want {
			t.Errorf("after %s: %s, want %s", primary, got, want)
		}
	}
}

func TestSlowAttemptsBetween(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	slow := []SlowAttempt{
		{ID: 1, Start: t0.Add(-3 * time.Second), Duration: time.Second},    // ended before the fault
		{ID: 2, Start: t0.Add(-time.Second), Duration: 5 * time.Second},    // in flight when it hit
		{ID: 3, Start: t0, Duration: time.Second},                          // started with it
		{ID: 4, Start: t0.Add(5 * time.Second), Duration: 2 * time.Second}, // started at the end
		{ID: 5, Start: t0.Add(6 * time.Second), Duration: 2 * time.Second}} // after
	got := SlowAttemptsBetween(slow, t0, t0.Add(5*time.Second))
	if ids := []int64{}; len(got) != 3 || got[0].ID != 2 || got[1].ID != 3 || got[2].ID != 4 {
		for _, a := range got {
			ids = append(ids, a.ID)
		}
		t.Errorf("got the attempts %v, want 2, 3 and 4 (overlapping the bounds, both included)", ids)
	}
	a := SlowAttempt{Start: t0.Add(1500 * time.Millisecond), Duration: 5001 * time.Millisecond, Step: "commit", Host: "db-3", Error: "i/o timeout"}
	if s := a.String(); s != "12:00:01.500 5.001s at commit on db-3 (i/o timeout)" {
		t.Errorf("String() = %q", s)
	}
}
