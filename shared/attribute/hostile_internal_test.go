package attribute

import "testing"

// A late event whose cap period is already closed (the cap row holds a later period) cannot
// be checked against that period's spend: it must not fire for free. Before the fix the cap
// apply left the later period's spend unchanged and compared that with the limit, so the
// trigger fired, nothing was spent, and a cap already used up this period let it through.
func TestLateEventOfAClosedCapPeriodNeverFiresFree(t *testing.T) {
	syd := zone(t, "Australia/Sydney")
	rules := func(Instruction) (Rules, error) { return syd, nil }
	capDaily := &Cap{Budget: "views_points", Period: PeriodDaily, Limit: "1", Cost: "1"}
	in := Instruction{AttributeCode: "views", Operation: OpIncrement, Period: PeriodLifetime, Step: "1",
		Thresholds: []Threshold{{Value: "1", TriggerEvent: "View_1", Cap: capDaily}, {Value: "2", TriggerEvent: "View_2", Cap: capDaily}}}
	states := map[string]State{}
	// 2 July (Sydney) first, then a late event of 1 July: the LIFETIME counter reaches 2 and
	// crosses View_2, whose cap day (1 July) is older than the cap row's (2 July).
	fired := applyOnDays(t, states, in, rules, "2026-07-02T01:00:00Z", "2026-07-01T01:00:00Z")
	if len(fired) != 2 || !fired[0] || fired[1] {
		t.Fatalf("crossings fired = %v, want [true false]: the late crossing cannot be checked against its day's spend", fired)
	}
	if c := states[CapPrefix+"views_points"]; c.Period != "2026-07-02" || !c.Number.Equal(num("1")) {
		t.Errorf("cap = %s in %s, want 1 in 2026-07-02", c.Number, c.Period)
	}
}
