package retention

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// now is the fixed clock of the table tests; at(h) is h hours from it.
var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func at(h int) time.Time { return now.Add(time.Duration(h) * time.Hour) }

const day = 24

// backup is a base backup that started an hour before it completed, completedH hours from now.
func backup(key string, completedH int, size int64) BaseBackup {
	return BaseBackup{Key: key, StartedAt: at(completedH - 1), CompletedAt: at(completedH), Size: size}
}

func protected(b BaseBackup) BaseBackup {
	b.Protected = true
	return b
}

func segment(name string, lastH int, size int64) Segment {
	return Segment{Name: name, FirstEventTime: at(lastH - 1), LastEventTime: at(lastH), Size: size}
}

// expired names an expired backup and the reasons the plan must give.
type expired struct {
	key     string
	reasons []Reason
}

type decideCase struct {
	name     string
	inv      Inventory
	policy   Policy
	keep     []string  // keys, newest first
	expire   []expired // newest first
	segments []string  // names of deleted segments, in inventory order
	horizon  time.Time
}

var (
	week       = 7 * day * time.Hour
	sevenDays  = Policy{Window: week}
	keepThree  = Policy{Count: 3}
	budget1000 = Policy{Size: 1000}
)

// decideCases are the rules of the retention section of the spec, one row each, then their
// combinations and the edge cases.
var decideCases = []decideCase{
	{
		name:    "window: a backup completed before now minus the window is expired",
		inv:     Inventory{Backups: []BaseBackup{backup("new", -1, 10), backup("old", -8*day, 20)}},
		policy:  sevenDays,
		keep:    []string{"new"},
		expire:  []expired{{"old", []Reason{ReasonWindow}}},
		horizon: at(-2),
	},
	{
		name: "window: a backup completed exactly at now minus the window is kept (strictly before)",
		inv: Inventory{Backups: []BaseBackup{
			backup("new", -1, 10), backup("edge", -7*day, 10), backup("past", -7*day-1, 10)}},
		policy:  sevenDays,
		keep:    []string{"new", "edge"},
		expire:  []expired{{"past", []Reason{ReasonWindow}}},
		horizon: at(-7*day - 1),
	},
	{
		name:    "window: the newest backup is kept as a floor even when older than the window",
		inv:     Inventory{Backups: []BaseBackup{backup("only", -30*day, 10)}},
		policy:  sevenDays,
		keep:    []string{"only"},
		horizon: at(-30*day - 1),
	},
	{
		name: "window: the deletable set is the expired backups minus the newest",
		inv: Inventory{Backups: []BaseBackup{
			backup("b", -20*day, 1), backup("a", -30*day, 2), backup("c", -10*day, 4)}},
		policy:  sevenDays,
		keep:    []string{"c"},
		expire:  []expired{{"b", []Reason{ReasonWindow}}, {"a", []Reason{ReasonWindow}}},
		horizon: at(-10*day - 1),
	},
	{
		name: "binlog: segments whose last event predates the oldest kept backup's start are deleted",
		inv: Inventory{
			Backups: []BaseBackup{backup("new", -1, 10), backup("kept", -3*day, 10), backup("old", -9*day, 10)},
			Segments: []Segment{
				segment("s1", -9*day, 5), segment("s2", -3*day-2, 6), segment("s3", -3*day+5, 7), segment("s4", -1, 8)},
		},
		policy:   sevenDays,
		keep:     []string{"new", "kept"},
		expire:   []expired{{"old", []Reason{ReasonWindow}}},
		segments: []string{"s1", "s2"},
		horizon:  at(-3*day - 1),
	},
	{
		name: "binlog: a segment whose last event is exactly at the horizon is kept",
		inv: Inventory{
			Backups:  []BaseBackup{backup("new", -1, 10), backup("old", -9*day, 10)},
			Segments: []Segment{segment("edge", -2, 1), segment("before", -3, 1)},
		},
		policy:   sevenDays,
		keep:     []string{"new"},
		expire:   []expired{{"old", []Reason{ReasonWindow}}},
		segments: []string{"before"},
		horizon:  at(-2),
	},
	{
		name: "binlog: a segment with an unknown last-event time is kept",
		inv: Inventory{
			Backups:  []BaseBackup{backup("new", -1, 10), backup("old", -9*day, 10)},
			Segments: []Segment{{Name: "unknown", FirstEventTime: at(-20 * day), Size: 3}, segment("known", -20*day, 4)},
		},
		policy:   sevenDays,
		keep:     []string{"new"},
		expire:   []expired{{"old", []Reason{ReasonWindow}}},
		segments: []string{"known"},
		horizon:  at(-2),
	},
	{
		name: "binlog: deleted segments keep the inventory's order",
		inv: Inventory{
			Backups:  []BaseBackup{backup("new", -1, 10)},
			Segments: []Segment{segment("c", -10, 1), segment("a", -30, 1), segment("b", -20, 1)},
		},
		policy:   sevenDays,
		keep:     []string{"new"},
		segments: []string{"c", "a", "b"},
		horizon:  at(-2),
	},
	{
		name: "count: the newest N completed backups are kept",
		inv: Inventory{Backups: []BaseBackup{
			backup("d", -4, 1), backup("a", -1, 1), backup("e", -5, 1), backup("c", -3, 1), backup("b", -2, 1)}},
		policy:  keepThree,
		keep:    []string{"a", "b", "c"},
		expire:  []expired{{"d", []Reason{ReasonCount}}, {"e", []Reason{ReasonCount}}},
		horizon: at(-4),
	},
	{
		name:    "count: no more backups than the count expires nothing",
		inv:     Inventory{Backups: []BaseBackup{backup("a", -1, 1), backup("b", -2, 1), backup("c", -3, 1)}},
		policy:  keepThree,
		keep:    []string{"a", "b", "c"},
		horizon: at(-4),
	},
	{
		name: "count: a protected backup occupies its position and is kept beyond the count",
		inv: Inventory{Backups: []BaseBackup{
			backup("a", -1, 1), protected(backup("p", -2, 1)), backup("c", -3, 1), protected(backup("q", -4, 1))}},
		policy:  Policy{Count: 2},
		keep:    []string{"a", "p", "q"},
		expire:  []expired{{"c", []Reason{ReasonCount}}},
		horizon: at(-5),
	},
	{
		name:    "count: one keeps only the newest",
		inv:     Inventory{Backups: []BaseBackup{backup("a", -1, 1), backup("b", -2, 1)}},
		policy:  Policy{Count: 1},
		keep:    []string{"a"},
		expire:  []expired{{"b", []Reason{ReasonCount}}},
		horizon: at(-2),
	},
	{
		name: "size: a backup whose cumulative size exceeds the budget is expired",
		inv: Inventory{Backups: []BaseBackup{
			backup("a", -1, 400), backup("b", -2, 400), backup("c", -3, 400), backup("d", -4, 100)}},
		policy:  budget1000,
		keep:    []string{"a", "b"},
		expire:  []expired{{"c", []Reason{ReasonSize}}, {"d", []Reason{ReasonSize}}},
		horizon: at(-3),
	},
	{
		name:    "size: a cumulative total exactly at the budget is kept",
		inv:     Inventory{Backups: []BaseBackup{backup("a", -1, 600), backup("b", -2, 400), backup("c", -3, 1)}},
		policy:  budget1000,
		keep:    []string{"a", "b"},
		expire:  []expired{{"c", []Reason{ReasonSize}}},
		horizon: at(-3),
	},
	{
		name:    "size: the newest backup is kept as a floor even when it alone exceeds the budget",
		inv:     Inventory{Backups: []BaseBackup{backup("big", -1, 5000), backup("small", -2, 1)}},
		policy:  budget1000,
		keep:    []string{"big"},
		expire:  []expired{{"small", []Reason{ReasonSize}}},
		horizon: at(-2),
	},
	{
		name: "size: a protected backup counts against the budget and is kept",
		inv: Inventory{Backups: []BaseBackup{
			backup("a", -1, 500), protected(backup("p", -2, 500)), backup("c", -3, 500)}},
		policy:  budget1000,
		keep:    []string{"a", "p"},
		expire:  []expired{{"c", []Reason{ReasonSize}}},
		horizon: at(-3),
	},
	{
		name: "size: a negative size counts as zero and cannot make older backups fit",
		inv: Inventory{Backups: []BaseBackup{
			backup("a", -1, -500), backup("b", -2, 600), backup("c", -3, 500)}},
		policy:  budget1000,
		keep:    []string{"a", "b"},
		expire:  []expired{{"c", []Reason{ReasonSize}}},
		horizon: at(-3),
	},
	{
		name: "window and count: a backup is expired by either, with every reason listed",
		inv: Inventory{Backups: []BaseBackup{
			backup("a", -1, 1), backup("b", -2, 1), backup("c", -8*day, 1), backup("d", -9*day, 1)}},
		policy: Policy{Window: week, Count: 3},
		keep:   []string{"a", "b"},
		expire: []expired{
			{"c", []Reason{ReasonWindow}},
			{"d", []Reason{ReasonWindow, ReasonCount}},
		},
		horizon: at(-3),
	},
	{
		name: "window and count: the count expires backups inside the window",
		inv: Inventory{Backups: []BaseBackup{
			backup("a", -1, 1), backup("b", -2, 1), backup("c", -3, 1)}},
		policy:  Policy{Window: week, Count: 2},
		keep:    []string{"a", "b"},
		expire:  []expired{{"c", []Reason{ReasonCount}}},
		horizon: at(-3),
	},
	{
		name: "count and size: a backup is expired by either, with every reason listed",
		inv: Inventory{Backups: []BaseBackup{
			backup("a", -1, 100), backup("b", -2, 800), backup("c", -3, 50), backup("d", -4, 50)}},
		policy: Policy{Count: 3, Size: 920},
		keep:   []string{"a", "b"},
		expire: []expired{
			{"c", []Reason{ReasonSize}},
			{"d", []Reason{ReasonCount, ReasonSize}},
		},
		horizon: at(-3),
	},
	{
		name: "all three: each policy is listed in the order window, count, size",
		inv: Inventory{Backups: []BaseBackup{
			backup("a", -1, 10), backup("b", -2, 10), backup("c", -8*day, 10),
			backup("d", -9*day, 1000), backup("e", -3, 10)}},
		policy: Policy{Window: week, Count: 4, Size: 100},
		keep:   []string{"a", "b", "e"},
		expire: []expired{
			{"c", []Reason{ReasonWindow}},
			{"d", []Reason{ReasonWindow, ReasonCount, ReasonSize}},
		},
		horizon: at(-4),
	},
	{
		name: "ties: equal completion times order by start time, newest first",
		inv: Inventory{Backups: []BaseBackup{
			{Key: "early", StartedAt: at(-5), CompletedAt: at(-1), Size: 1},
			{Key: "late", StartedAt: at(-2), CompletedAt: at(-1), Size: 1}}},
		policy:  Policy{Count: 1},
		keep:    []string{"late"},
		expire:  []expired{{"early", []Reason{ReasonCount}}},
		horizon: at(-2),
	},
	{
		name: "ties: equal completion and start times order by key, descending",
		inv: Inventory{Backups: []BaseBackup{
			backup("k1", -1, 1), backup("k3", -1, 1), backup("k2", -1, 1)}},
		policy:  Policy{Count: 2},
		keep:    []string{"k3", "k2"},
		expire:  []expired{{"k1", []Reason{ReasonCount}}},
		horizon: at(-2),
	},
	{
		name: "protected: an expired protected backup is kept and holds the binlog horizon back",
		inv: Inventory{
			Backups:  []BaseBackup{backup("new", -1, 1), protected(backup("restore-src", -40*day, 1)), backup("old", -20*day, 1)},
			Segments: []Segment{segment("before-src", -41*day, 1), segment("after-src", -30*day, 1)},
		},
		policy:   sevenDays,
		keep:     []string{"new", "restore-src"},
		expire:   []expired{{"old", []Reason{ReasonWindow}}},
		segments: []string{"before-src"},
		horizon:  at(-40*day - 1),
	},
	{
		name: "unknown start: a kept backup with a zero start time leaves the horizon zero and deletes no segment",
		inv: Inventory{
			Backups: []BaseBackup{
				backup("new", -1, 1), {Key: "nostart", CompletedAt: at(-2), Size: 1}, backup("old", -9*day, 1)},
			Segments: []Segment{segment("ancient", -100*day, 1)},
		},
		policy: sevenDays,
		keep:   []string{"new", "nostart"},
		expire: []expired{{"old", []Reason{ReasonWindow}}},
	},
	{
		name: "unknown start: an expired backup with a zero start time does not affect the horizon",
		inv: Inventory{
			Backups:  []BaseBackup{backup("new", -1, 1), {Key: "nostart", CompletedAt: at(-9 * day), Size: 1}},
			Segments: []Segment{segment("ancient", -100*day, 1)},
		},
		policy:   sevenDays,
		keep:     []string{"new"},
		expire:   []expired{{"nostart", []Reason{ReasonWindow}}},
		segments: []string{"ancient"},
		horizon:  at(-2),
	},
	{
		name: "unknown completion: a zero completion time orders oldest and is before any window",
		inv: Inventory{Backups: []BaseBackup{
			{Key: "nocompletion", StartedAt: at(-3), Size: 1}, backup("new", -1, 1)}},
		policy:  sevenDays,
		keep:    []string{"new"},
		expire:  []expired{{"nocompletion", []Reason{ReasonWindow}}},
		horizon: at(-2),
	},
	{
		name:   "empty inventory: nothing is kept, nothing deleted, the horizon is zero",
		policy: Policy{Window: week, Count: 1, Size: 1},
	},
	{
		name:   "no backups: no segment is deleted without a kept backup to anchor the horizon",
		inv:    Inventory{Segments: []Segment{segment("s", -100*day, 1)}},
		policy: sevenDays,
	},
	{
		name: "zero policy: everything is kept newest first and nothing is deleted",
		inv: Inventory{
			Backups:  []BaseBackup{backup("old", -90*day, 1), backup("new", -1, 1), backup("mid", -30*day, 1)},
			Segments: []Segment{segment("ancient", -365*day, 1)},
		},
		keep: []string{"new", "mid", "old"},
	},
	{
		name: "zero policy: negative settings are not configured",
		inv: Inventory{Backups: []BaseBackup{backup("new", -1, 1), backup("old", -90*day, 1)},
			Segments: []Segment{segment("ancient", -365*day, 1)}},
		policy: Policy{Window: -time.Hour, Count: -1, Size: -1},
		keep:   []string{"new", "old"},
	},
}

func TestDecide(t *testing.T) {
	for _, c := range decideCases {
		t.Run(c.name, func(t *testing.T) {
			inv := cloneInventory(c.inv)
			plan := Decide(c.inv, c.policy, now)
			checkPlanAgainstCase(t, plan, c)
			if !inventoriesEqual(inv, c.inv) {
				t.Errorf("Decide modified its inventory")
			}
		})
	}
}

func checkPlanAgainstCase(t *testing.T, plan Plan, c decideCase) {
	t.Helper()
	var keep []string
	for _, b := range plan.Keep {
		keep = append(keep, b.Key)
	}
	if !slices.Equal(keep, c.keep) {
		t.Errorf("Keep = %q, want %q", keep, c.keep)
	}
	var got []string
	var want []string
	for _, e := range plan.Expire {
		got = append(got, fmt.Sprintf("%s%v", e.Key, e.Reasons))
	}
	for _, e := range c.expire {
		want = append(want, fmt.Sprintf("%s%v", e.key, e.reasons))
	}
	if !slices.Equal(got, want) {
		t.Errorf("Expire = %q, want %q", got, want)
	}
	var segs []string
	for _, s := range plan.DeleteSegments {
		segs = append(segs, s.Name)
	}
	if !slices.Equal(segs, c.segments) {
		t.Errorf("DeleteSegments = %q, want %q", segs, c.segments)
	}
	if !plan.Horizon.Equal(c.horizon) {
		t.Errorf("Horizon = %v, want %v", plan.Horizon, c.horizon)
	}
	checkBytes(t, c.inv, plan)
}

// checkBytes checks ExpiredBytes and SegmentBytes against the sizes of the named items in inv.
func checkBytes(t *testing.T, inv Inventory, plan Plan) {
	t.Helper()
	var wantExpired, wantSegments int64
	for _, e := range plan.Expire {
		for _, b := range inv.Backups {
			if b.Key == e.Key {
				wantExpired += b.Size
			}
		}
	}
	for _, s := range plan.DeleteSegments {
		for _, is := range inv.Segments {
			if is.Name == s.Name {
				wantSegments += is.Size
			}
		}
	}
	if plan.ExpiredBytes != wantExpired || plan.SegmentBytes != wantSegments {
		t.Errorf("ExpiredBytes, SegmentBytes = %d, %d; want %d, %d",
			plan.ExpiredBytes, plan.SegmentBytes, wantExpired, wantSegments)
	}
}

func cloneInventory(inv Inventory) Inventory {
	return Inventory{Backups: slices.Clone(inv.Backups), Segments: slices.Clone(inv.Segments)}
}

func inventoriesEqual(a, b Inventory) bool {
	return slices.Equal(a.Backups, b.Backups) && slices.Equal(a.Segments, b.Segments)
}

func TestDecideDoesNotShareTheInputSlices(t *testing.T) {
	inv := Inventory{Backups: []BaseBackup{backup("b", -2, 1), backup("a", -1, 1)}}
	plan := Decide(inv, Policy{}, now)
	if len(plan.Keep) != 2 || plan.Keep[0].Key != "a" {
		t.Fatalf("Keep = %+v, want a then b", plan.Keep)
	}
	plan.Keep[0].Key = "changed"
	if inv.Backups[0].Key != "b" || inv.Backups[1].Key != "a" {
		t.Errorf("the inventory changed through the plan: %+v", inv.Backups)
	}
}

func TestSegmentExpired(t *testing.T) {
	h := at(-10)
	cases := []struct {
		name    string
		seg     Segment
		horizon time.Time
		want    bool
	}{
		{"before the horizon", segment("s", -11, 1), h, true},
		{"at the horizon", segment("s", -10, 1), h, false},
		{"after the horizon", segment("s", -9, 1), h, false},
		{"unknown last event", Segment{Name: "s", FirstEventTime: at(-50)}, h, false},
		{"zero horizon", segment("s", -11, 1), time.Time{}, false},
	}
	for _, c := range cases {
		if got := SegmentExpired(c.seg, c.horizon); got != c.want {
			t.Errorf("%s: SegmentExpired = %v, want %v", c.name, got, c.want)
		}
	}
}
