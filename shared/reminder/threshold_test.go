package reminder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

const classSetting = "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d"

// classSettingJSON is a ThresholdCondition setting on a class session's booking ratio.
// classFixture is a fixture whose one setting is the class-session threshold setting with
// policy and levels (no quiet window), at 2026-10-01T00:00Z (10:00 in Sydney).
func classFixture(t *testing.T, policy reminder.FiringPolicy, levels string) *fixture {
	t.Helper()
	f := newFixture(t, classSettingJSON(string(policy), levels, ""))
	f.clock.Set(utc("2026-10-01T00:00:00Z"))
	return f
}

func classSettingJSON(policy, levels, window string) string {
	w := ""
	if window != "" {
		w = `,"sendWindow":` + window
	}
	return `{"guid":"` + classSetting + `","businessUnitId":"bu-syd","name":"Class filling up","sourceType":"ClassSession",
	  "triggerType":"ThresholdCondition","triggerKey":"booking",
	  "threshold":{"metric":{"key":"bookedPercent","field":"booked","of":"capacity"},"levels":` + levels + `,"firingPolicy":"` + policy + `"` + w + `},
	  "template":"class-filling","channels":["log"],"recipients":{"field":"coachEmail","fixed":["ops@example.test"]}}`
}

func classEvent(id string, rev int64, booked, capacity any) []byte {
	e := map[string]any{"specversion": "1.0", "id": id, "source": "/bookings", "type": "ClassSession.Upserted",
		"businessunitid": "bu-syd", "entitytype": "ClassSession", "entityguid": "class-1", "revision": rev,
		"data": map[string]any{"booked": booked, "capacity": capacity, "coachEmail": "coach@example.test"}}
	b, _ := json.Marshal(e)
	return b
}

// classRows returns "thresholdKey/status/reason" of every row of class-1, sorted.
func classRows(t *testing.T, f *fixture) []string {
	t.Helper()
	rows, err := f.st.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: "ClassSession", SourceEntityGuid: "class-1", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		k := r.SchedulerKey[strings.Index(r.SchedulerKey, ":threshold:")+len(":threshold:"):]
		out = append(out, fmt.Sprintf("%s/%s/%s", strings.TrimPrefix(k, "bookedPercent:"), r.Status, r.ReasonCode))
	}
	sort.Strings(out)
	return out
}

// completeDue claims and executes everything due now through the handler, completing rows
// (the poller's job, without the poller).
func completeDue(t *testing.T, f *fixture) int {
	t.Helper()
	ctx := context.Background()
	rows, err := f.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: f.clock.Now(), Lease: time.Minute, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		out, err := f.h.Execute(ctx, r, f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if out.Deactivate != "" {
			if err := f.st.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: r.ID, Token: r.Version, Now: f.clock.Now(), Reason: out.Deactivate}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := f.st.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: f.clock.Now(), Deliveries: out.Deliveries, Outbox: out.Outbox}); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// The four firing policies of docs/architecture.md#threshold-reminders, each a sequence of booking events (capacity 10, levels
// 80 and 100 %), with rows executed in between where the step says so.
func TestThresholdFiringPolicies(t *testing.T) {
	t.Parallel()
	type step struct {
		at       string // clock (UTC)
		booked   int
		complete bool // execute what is due after the event
		want     []string
	}
	cases := []struct {
		policy reminder.FiringPolicy
		steps  []step
	}{
		{reminder.OncePerThreshold, []step{
			{"2026-10-01T00:00:00Z", 7, false, nil},
			{"2026-10-01T00:10:00Z", 8, true, []string{"80:OncePerThreshold:src/Completed/"}},
			{"2026-10-01T00:20:00Z", 9, false, []string{"80:OncePerThreshold:src/Completed/"}},
			{"2026-10-01T00:30:00Z", 10, false, []string{"100:OncePerThreshold:src/Pending/", "80:OncePerThreshold:src/Completed/"}},
			// Falls below both before 100 % was sent: its pending row is deactivated.
			{"2026-10-01T00:31:00Z", 7, false, []string{"100:OncePerThreshold:src/Deactivated/ConditionNoLongerMet", "80:OncePerThreshold:src/Completed/"}},
			// Reached again: 80 % never fires twice; 100 % reactivates its row and fires once.
			{"2026-10-01T00:40:00Z", 10, true, []string{"100:OncePerThreshold:src/Completed/", "80:OncePerThreshold:src/Completed/"}},
		}},
		{reminder.OncePerSource, []step{
			{"2026-10-01T00:00:00Z", 8, false, []string{"any:OncePerSource:src/Pending/"}},
			{"2026-10-01T00:01:00Z", 10, true, []string{"any:OncePerSource:src/Completed/"}},
			{"2026-10-01T00:10:00Z", 5, false, []string{"any:OncePerSource:src/Completed/"}},
			{"2026-10-02T00:10:00Z", 9, true, []string{"any:OncePerSource:src/Completed/"}},
		}},
		{reminder.OncePerDay, []step{
			// 2026-10-01 10:00 AEST.
			{"2026-10-01T00:00:00Z", 8, true, []string{"80:OncePerDay:d2026-10-01/Completed/"}},
			{"2026-10-01T03:00:00Z", 9, true, []string{"80:OncePerDay:d2026-10-01/Completed/"}},
			// 2026-10-02 09:00 AEST: a new local day fires again while still reached.
			{"2026-10-01T23:00:00Z", 9, false, []string{"80:OncePerDay:d2026-10-01/Completed/", "80:OncePerDay:d2026-10-02/Pending/"}},
			{"2026-10-01T23:05:00Z", 6, false, []string{"80:OncePerDay:d2026-10-01/Completed/", "80:OncePerDay:d2026-10-02/Deactivated/ConditionNoLongerMet"}},
		}},
		{reminder.FalseToTrue, []step{
			{"2026-10-01T00:00:00Z", 8, true, []string{"80:FalseToTrue:e1/Completed/"}},
			{"2026-10-01T00:10:00Z", 9, false, []string{"80:FalseToTrue:e1/Completed/"}},
			{"2026-10-01T00:20:00Z", 6, false, []string{"80:FalseToTrue:e1/Completed/"}},
			// Every false→true crossing fires.
			{"2026-10-01T00:30:00Z", 8, true, []string{"80:FalseToTrue:e1/Completed/", "80:FalseToTrue:e2/Completed/"}},
			{"2026-10-01T00:40:00Z", 10, true, []string{"100:FalseToTrue:e1/Completed/", "80:FalseToTrue:e1/Completed/", "80:FalseToTrue:e2/Completed/"}},
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.policy), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, classSettingJSON(string(tc.policy), "[80, 100]", ""))
			for i, st := range tc.steps {
				f.clock.Set(utc(st.at))
				f.mustProcess(t, classEvent(fmt.Sprintf("evt-%d", i), int64(i+1), st.booked, 10))
				if st.complete {
					completeDue(t, f)
				}
				if got := classRows(t, f); strings.Join(got, " ") != strings.Join(st.want, " ") {
					t.Fatalf("step %d (booked %d)\n got %v\nwant %v", i, st.booked, got, st.want)
				}
			}
		})
	}
}

// Rising edges are counted once per source revision: a redelivery after a crash (snapshot
// and edge already stored, rows not yet ensured) and an out-of-order older revision change
// nothing.
func TestThresholdEdgesIdempotentUnderRedelivery(t *testing.T) {
	t.Parallel()
	f := classFixture(t, reminder.FalseToTrue, "[80]")
	ctx := context.Background()
	f.mustProcess(t, classEvent("e1", 1, 9, 10))
	completeDue(t, f)
	f.mustProcess(t, classEvent("e2", 2, 5, 10))
	// The crash: revision 3 (booked 9) was stored and its edge counted, then the process died.
	if _, err := f.st.SourceSnapshotApply(ctx, store.SourceSnapshot{EntityType: "ClassSession", EntityGuid: "class-1", BusinessUnitID: "bu-syd",
		Revision: 3, DataJSON: `{"booked":9,"capacity":10,"coachEmail":"coach@example.test"}`, LastEventID: "e3", UpdatedOn: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if e, err := f.st.ThresholdEdgeApply(ctx, store.ThresholdEdgeApplyParams{SettingGuid: classSetting, SourceEntityType: "ClassSession",
		SourceEntityGuid: "class-1", Level: "80", IsMet: true, Revision: 3, Now: f.clock.Now()}); err != nil || e.EdgeCount != 2 {
		t.Fatalf("%+v %v", e, err)
	}
	// The redelivered event finishes the work under the same edge.
	r := f.mustProcess(t, classEvent("e3", 3, 9, 10))
	if r.Outcome != reminder.EventApplied || r.Ensured[automation.EnsureInserted] != 1 {
		t.Fatalf("%+v", r)
	}
	// The same event id again, and an older revision arriving late: no new edge.
	if r := f.mustProcess(t, classEvent("e3", 3, 9, 10)); r.Outcome != reminder.EventDuplicate {
		t.Fatalf("%+v", r)
	}
	if r := f.mustProcess(t, classEvent("e2b", 2, 10, 10)); r.Outcome != reminder.EventStale {
		t.Fatalf("%+v", r)
	}
	eq(t, classRows(t, f), "80:FalseToTrue:e1/Completed/", "80:FalseToTrue:e2/Pending/")
	if e, _ := f.st.ThresholdEdgeGet(ctx, classSetting, "ClassSession", "class-1", "80"); e.EdgeCount != 2 || e.Revision != 3 {
		t.Fatalf("edge %+v", e)
	}
}

// The metric is exact decimal arithmetic: 9 of 10 is 90 %, not 90.00000000000001.
func TestThresholdMetricBoundaries(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name             string
		booked, capacity any
		want             []string
		invalid          string
	}{
		{"exactly 90 of 100 percent", 9, 10, []string{"90:OncePerThreshold:src/Pending/"}, ""},
		{"just under 90 percent", 8.99, 10, []string{"87.5:OncePerThreshold:src/Pending/"}, ""},
		{"decimal level 87.5", 7, 8, []string{"87.5:OncePerThreshold:src/Pending/"}, ""},
		{"no capacity", 5, 0, nil, ""},
		{"missing field", nil, 10, nil, ""},
		{"not a number", "nine", 10, nil, "data.booked"},
		{"capacity not a number", 9, true, nil, "data.capacity"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := classFixture(t, reminder.OncePerThreshold, "[87.5, 90]")
			_, err := f.process(t, classEvent("e1", 1, tc.booked, tc.capacity))
			if tc.invalid != "" {
				if !automation.IsInvalid(err) || !strings.Contains(err.Error(), tc.invalid) {
					t.Fatalf("err = %v, want bad input naming %s", err, tc.invalid)
				}
				if _, serr := f.st.SourceSnapshotGet(context.Background(), "ClassSession", "class-1"); serr == nil {
					t.Fatal("a rejected event stored a snapshot")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := classRows(t, f)
			if tc.name == "exactly 90 of 100 percent" {
				tc.want = []string{"87.5:OncePerThreshold:src/Pending/", "90:OncePerThreshold:src/Pending/"}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// Quiet hours: a threshold reached outside the send window is due at the window's next local
// start, with the DST product rule (02:30 on Sydney's DST start day is 03:30 AEDT); later
// events while it waits keep its schedule.
func TestThresholdSendWindow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, window, at, wantOn, wantLocal string
	}{
		{"inside", `{"start":"08:00","end":"20:00"}`, "2026-10-01T01:00:00Z", "2026-10-01T01:00:00Z", "2026-10-01 11:00"},
		{"evening, next morning", `{"start":"08:00","end":"20:00"}`, "2026-10-01T11:00:00Z", "2026-10-01T22:00:00Z", "2026-10-02 08:00"},
		{"early morning, same day", `{"start":"08:00","end":"20:00"}`, "2026-09-30T18:30:00Z", "2026-09-30T22:00:00Z", "2026-10-01 08:00"},
		{"overnight window, inside", `{"start":"22:00","end":"06:00"}`, "2026-10-01T14:00:00Z", "2026-10-01T14:00:00Z", "2026-10-02 00:00"},
		{"overnight window, daytime", `{"start":"22:00","end":"06:00"}`, "2026-10-01T02:00:00Z", "2026-10-01T12:00:00Z", "2026-10-01 22:00"},
		// Start 02:30 on 2026-10-04 does not exist in Sydney: 03:30 AEDT = 16:30Z (tzoracle.py).
		{"start in the DST gap", `{"start":"02:30","end":"06:00"}`, "2026-10-03T12:00:00Z", "2026-10-03T16:30:00Z", "2026-10-04 03:30"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, classSettingJSON(string(reminder.OncePerThreshold), "[80]", tc.window))
			f.clock.Set(utc(tc.at))
			f.mustProcess(t, classEvent("e1", 1, 9, 10))
			rows, _ := f.st.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: "ClassSession", SourceEntityGuid: "class-1", Limit: 10})
			if len(rows) != 1 || rows[0].ScheduledOn.Format(time.RFC3339) != tc.wantOn || rows[0].ScheduledLocalDate+" "+rows[0].ScheduledLocalTime != tc.wantLocal {
				t.Fatalf("rows %+v", rows)
			}
			f.clock.Set(utc(tc.at).Add(30 * time.Minute))
			f.mustProcess(t, classEvent("e2", 2, 10, 10))
			again, _ := f.st.SchedulerGetByKey(context.Background(), rows[0].SchedulerKey)
			if !again.ScheduledOn.Equal(rows[0].ScheduledOn) && again.Status == automation.StatusPending {
				t.Fatalf("a later event moved the pending row: %v → %v", rows[0].ScheduledOn, again.ScheduledOn)
			}
		})
	}
}

// Revalidation of threshold rows at due time (docs/architecture.md#revalidation, docs/architecture.md#threshold-reminders).
func TestThresholdRevalidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		policy reminder.FiringPolicy
		change func(t *testing.T, f *fixture)
		want   automation.ReasonCode
	}{
		{"happy path", reminder.OncePerThreshold, nil, ""},
		{"fell below without an event reaching us", reminder.OncePerThreshold, func(t *testing.T, f *fixture) {
			classSnapshot(t, f, 2, 3)
		}, automation.ReasonConditionNoLongerMet},
		{"level edited away", reminder.OncePerThreshold, func(t *testing.T, f *fixture) {
			f.putSetting(t, classSettingJSON(string(reminder.OncePerThreshold), "[85]", ""))
		}, automation.ReasonSuperseded},
		{"policy changed", reminder.OncePerThreshold, func(t *testing.T, f *fixture) {
			f.putSetting(t, classSettingJSON(string(reminder.OncePerDay), "[80]", ""))
		}, automation.ReasonSuperseded},
		{"falseToTrue: condition fell", reminder.FalseToTrue, func(t *testing.T, f *fixture) {
			f.mustProcess(t, classEvent("e2", 2, 3, 10))
		}, automation.ReasonConditionNoLongerMet},
		{"setting deactivated", reminder.OncePerSource, func(t *testing.T, f *fixture) {
			f.putSetting(t, strings.Replace(classSettingJSON(string(reminder.OncePerSource), "[80]", ""), `"template"`, `"isActive":false,"template"`, 1))
		}, automation.ReasonReminderSettingInactive},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := classFixture(t, tc.policy, "[80]")
			f.mustProcess(t, classEvent("e1", 1, 9, 10))
			rows := f.claimDue(t, 1)
			if tc.change != nil {
				tc.change(t, f)
			}
			out, err := f.h.Execute(context.Background(), rows[0], f.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			if out.Deactivate != tc.want {
				t.Fatalf("deactivate %q, want %q", out.Deactivate, tc.want)
			}
			if tc.want != "" {
				return
			}
			if len(out.Deliveries) != 2 || out.Deliveries[0].Recipient != "coach@example.test" || out.Deliveries[1].Recipient != "ops@example.test" {
				t.Fatalf("deliveries %+v", out.Deliveries)
			}
			var p reminder.Payload
			if err := json.Unmarshal([]byte(out.Deliveries[0].PayloadJSON), &p); err != nil || p.MetricValue != "90" || p.ThresholdLevel != "80" || p.MetricKey != "bookedPercent" {
				t.Fatalf("payload %+v %v", p, err)
			}
		})
	}
}

func classSnapshot(t *testing.T, f *fixture, rev int64, booked int) {
	t.Helper()
	if _, err := f.st.SourceSnapshotApply(context.Background(), store.SourceSnapshot{EntityType: "ClassSession", EntityGuid: "class-1", BusinessUnitID: "bu-syd",
		Revision: rev, DataJSON: fmt.Sprintf(`{"booked":%d,"capacity":10,"coachEmail":"coach@example.test"}`, booked), LastEventID: "x", UpdatedOn: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
}

func TestThresholdSettingValidation(t *testing.T) {
	t.Parallel()
	base := classSettingJSON(string(reminder.OncePerThreshold), "[80, 90]", "")
	mutate := func(old, new string) string { return strings.Replace(base, old, new, 1) }
	cases := []refusedSetting{
		{"no metric", mutate(`"metric":{"key":"bookedPercent","field":"booked","of":"capacity"},`, ``), "threshold.metric"},
		{"metric without field", mutate(`"field":"booked",`, ``), "threshold.metric.field"},
		{"no levels", mutate(`[80, 90]`, `[]`), "threshold.levels"},
		{"duplicate level", mutate(`[80, 90]`, `[80, 80.0]`), "threshold.levels[1]"},
		{"unknown policy", mutate(`"OncePerThreshold"`, `"Sometimes"`), "threshold.firingPolicy"},
		{"offsets on a threshold", mutate(`"triggerKey":"booking",`, `"triggerKey":"booking","offsetsDays":[1],`), "offsetsDays"},
		{"window 25:00", mutate(`"firingPolicy"`, `"sendWindow":{"start":"25:00","end":"06:00"},"firingPolicy"`), "25:00"},
		{"empty window", mutate(`"firingPolicy"`, `"sendWindow":{"start":"06:00","end":"06:00"},"firingPolicy"`), "threshold.sendWindow"},
	}
	checkSettingsRefused(t, cases)
}
