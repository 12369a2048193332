package support

import "testing"

// The explain summary writes each outcome as words: "1 on hold", never "1 onhold" (issue 35),
// and keeps a reason label as it is.
func TestSettingSummaryWritesOutcomesAsWords(t *testing.T) {
	t.Parallel()
	e := Setting{Name: "Police check expiry", Applies: true, Occurrences: []Occurrence{
		{Outcome: "OnHold"}, {Outcome: "Waiting"}, {Outcome: "Waiting"}, {Outcome: "NotCreated"},
		{Outcome: "NotSent", ReasonCode: "MissedWindow"}, {Outcome: "NotSent"},
	}}
	want := "Police check expiry: 1 on hold, 2 waiting, 1 not created, 1 not sent (MissedWindow), 1 not sent."
	if got := settingSummary(e); got != want {
		t.Fatalf("summary:\n got %q\nwant %q", got, want)
	}
}
