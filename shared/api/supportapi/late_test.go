package supportapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/support"
)

// TestReleaseOfARowPastItsLatenessSaysSo: a reminder more than its setting's
// maxLatenessHours late is recorded TooLate when it runs, never sent (the late rule, docs/architecture.md#late-rule).
// Releasing (or retrying now) such a held row does not send it; the answer must say so, and
// how to send it anyway, instead of only "due at once". Within the window there is no note.
func TestReleaseOfARowPastItsLatenessSaysSo(t *testing.T) {
	t.Parallel()
	e := seeded(t, nil)
	rows := e.RowsOf(t, guidA)
	late := e.hold(t, rows[1])
	e.clock.Set(rows[1].ScheduledOn.Add(49 * time.Hour)) // the setting allows 48 h (default)
	r := e.call(t, "POST", fmt.Sprintf("/api/support/scheduler-rows/%d/release", late.ID), `{"reason":"provider fixed"}`, operator, ifMatch(late.Version))
	var res support.ActResult
	r.JSON(t, &res)
	if r.Code != 200 || !strings.Contains(res.Note, "TooLate") || !strings.Contains(res.Note, "48") || !strings.Contains(res.Note, "retry") {
		t.Fatalf("release past the lateness window: %d note %q", r.Code, res.Note)
	}
	e.poll(t, e.clock.Now())
	if got := e.Row(t, late.ID); got.ReasonCode != "TooLate" {
		t.Fatalf("the note is wrong: the released row ended %s/%s", got.Status, got.ReasonCode)
	}

	e2 := seeded(t, nil)
	rows = e2.RowsOf(t, guidA)
	onTime := e2.hold(t, rows[1])
	e2.clock.Set(rows[1].ScheduledOn.Add(2 * time.Hour))
	r = e2.call(t, "POST", fmt.Sprintf("/api/support/scheduler-rows/%d/release", onTime.ID), `{"reason":"provider fixed"}`, operator, ifMatch(onTime.Version))
	res = support.ActResult{}
	r.JSON(t, &res)
	if r.Code != 200 || res.Note != "" {
		t.Fatalf("release within the lateness window: %d note %q", r.Code, res.Note)
	}
}
