package sim

import (
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/delivery/acssim"
)

// The preference invariants can fail: an SMS sent to an opted-out number, an opted-out
// delivery not Skipped, a Skipped one nobody opted out of, and a send inside quiet hours
// are each reported.
func TestPreferenceChecksCanFail(t *testing.T) {
	w := &Workload{Seed: 0, Units: []Unit{{ID: "bu-1", Zone: "Australia/Sydney"}},
		Dates: []DateSetting{{Guid: "s", Unit: "bu-1", SourceType: "Membership", Channel: "sms"}},
		Ops: []Op{{Kind: OpEvent, SourceType: "Membership", Unit: "bu-1", Email: "+61410000001"},
			{Kind: OpEvent, SourceType: "Membership", Unit: "bu-1", Email: "+61410000002"}}}
	p := w.prefPlan()
	if p.optedOut["+61410000001"] != "bu-1" || p.optedOut["+61410000002"] != "" || !p.quiet["bu-1"] {
		t.Fatalf("plan %+v", p)
	}
	night := time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC) // 22:00 in Sydney (AEST, +10)
	day := time.Date(2026, 10, 3, 2, 0, 0, 0, time.UTC)    // 12:00 in Sydney
	c := &checker{w: w, checked: map[string]int{},
		sms: func() []acssim.Request {
			return []acssim.Request{{To: "+61410000001", Tag: "dk-1", SentThisRequest: true}}
		}}
	r := &report{c: c}
	c.checkPreferences(r, []job{
		{key: "dk-1", channel: "sms", recipient: "+61410000001", unit: "bu-1", status: "Sent", sentOn: &day},
		{key: "dk-2", channel: "sms", recipient: "+61410000002", unit: "bu-1", status: "Skipped", lastError: "the recipient opted out of …"},
		{key: "dk-3", channel: "sms", recipient: "+61410000002", unit: "bu-1", status: "Sent", sentOn: &night},
		{key: "dk-4", channel: "sms", recipient: "+61410000002", unit: "bu-1", status: "Queued", lastError: "waiting for quiet hours to end at …", next: &night},
	})
	got := map[string]int{}
	for _, v := range r.vs {
		got[v.Invariant]++
	}
	if got[InvNeverOptedOut] != 3 || got[InvQuietHours] != 2 {
		t.Fatalf("violations %v", r.vs)
	}
	// And a clean history passes.
	r = &report{c: &checker{w: w, checked: map[string]int{}}}
	r.c.checkPreferences(r, []job{
		{key: "dk-1", channel: "sms", recipient: "+61410000001", unit: "bu-1", status: "Skipped", lastError: "the recipient opted out of marketing sms messages"},
		{key: "dk-3", channel: "sms", recipient: "+61410000002", unit: "bu-1", status: "Sent", sentOn: &day},
	})
	if len(r.vs) != 0 {
		t.Fatalf("a clean history: %v", r.vs)
	}
}

// The late opt-out's check (LateOptOut, issue 38) can fail: a number that opted out at T in
// the middle of the run may still be sent a delivery first claimed at or before T (an
// attempt may have passed its gate before T), but a delivery first claimed after T must be
// Skipped and never reach ACS; a Skipped delivery to it must name the opt-out.
func TestLateOptOutCheckCanFail(t *testing.T) {
	w := &Workload{Seed: 0, Units: []Unit{{ID: "bu-1", Zone: "Australia/Sydney"}},
		Dates: []DateSetting{{Guid: "s", Unit: "bu-1", SourceType: "Membership", Channel: "sms"}},
		Ops: []Op{{Kind: OpEvent, SourceType: "Membership", Unit: "bu-1", Email: "+61410000001"},
			{Kind: OpEvent, SourceType: "Membership", Unit: "bu-1", Email: "+61410000002"}}}
	const late = "+61410000002"
	if p := w.prefPlan(); p.late[late] != "bu-1" || p.optedOut[late] != "" {
		t.Fatalf("plan %+v", p)
	}
	day := time.Date(2026, 10, 3, 2, 0, 0, 0, time.UTC) // 12:00 in Sydney, outside quiet hours
	before, after := day.Add(-time.Second), day.Add(time.Second)
	newChecker := func(sent ...string) *checker {
		return &checker{w: w, checked: map[string]int{}, lateOptOut: map[string]time.Time{late: day},
			sms: func() []acssim.Request {
				var rs []acssim.Request
				for _, k := range sent {
					rs = append(rs, acssim.Request{To: late, Tag: k, SentThisRequest: true})
				}
				return rs
			}}
	}
	r := &report{c: newChecker("dk-after")}
	r.c.checkPreferences(r, []job{
		{key: "dk-after", channel: "sms", recipient: late, unit: "bu-1", status: "Sent", sentOn: &after, firstClaimed: &after},
		{key: "dk-skip", channel: "sms", recipient: late, unit: "bu-1", status: "Skipped", lastError: "gone", firstClaimed: &before},
	})
	got := map[string]int{}
	for _, v := range r.vs {
		got[v.Invariant]++
	}
	if got[InvNeverOptedOut] != 3 {
		t.Fatalf("violations %v", r.vs)
	}
	// Clean: first claimed before the opt-out and sent; at its instant or after, Skipped.
	r = &report{c: newChecker("dk-before")}
	r.c.checkPreferences(r, []job{
		{key: "dk-before", channel: "sms", recipient: late, unit: "bu-1", status: "Sent", sentOn: &after, firstClaimed: &before},
		{key: "dk-at", channel: "sms", recipient: late, unit: "bu-1", status: "Skipped", lastError: "the recipient opted out of marketing sms messages", firstClaimed: &day},
		{key: "dk-later", channel: "sms", recipient: late, unit: "bu-1", status: "Skipped", lastError: "the recipient opted out of marketing sms messages", firstClaimed: &after},
	})
	if len(r.vs) != 0 {
		t.Fatalf("a clean history: %v", r.vs)
	}
}
