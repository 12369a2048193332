package support_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/support"
)

const (
	expSetting = "0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f"
	expGuid    = "3b2d6f0e-1a4c-4d8e-9b7a-2c5e8f1a3d6b"
)

func (e *env) setting(t *testing.T, active bool, sendAt string) {
	t.Helper()
	set, err := reminder.ParseSetting([]byte(fmt.Sprintf(`{"guid":%q,"businessUnitId":"bu-syd","name":"Police check expiry",
	  "sourceType":"PoliceVetting","triggerType":"DateBased","triggerKey":"expiresOn","offsetsDays":[7,0],"sendLocalTime":%q,
	  "template":"t","channels":["log"],"recipients":{"field":"staffEmail"},"isActive":%v}`, expSetting, sendAt, active)))
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := reminder.SettingRecord(set, 1, e.clock.Now())
	if err := e.st.ReminderSettingUpsert(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
}

func (e *env) event(t *testing.T, id string, rev int, data map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": id, "source": "/hr", "type": "PoliceVetting.Upserted",
		"businessunitid": "bu-syd", "entitytype": "PoliceVetting", "entityguid": expGuid, "revision": rev, "data": data})
	ev, err := events.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	svc := &reminder.Service{Store: e.st, Clock: e.clock}
	if _, err := svc.Process(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
}

func (e *env) explain(t *testing.T) support.Explanation {
	t.Helper()
	x, err := e.svc.Explain(context.Background(), automation.AllBusinessUnits(), "PoliceVetting", expGuid)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(x); strings.Contains(string(b), "zoe.walker@") {
		t.Fatalf("unmasked recipient: %s", b)
	}
	return x
}

func outcomes(x support.Explanation) string {
	var out []string
	for _, s := range x.Settings {
		for _, o := range s.Occurrences {
			out = append(out, o.LocalDate+" "+o.Outcome+"/"+o.ReasonCode)
		}
	}
	return strings.Join(out, ", ")
}

// TestExplainCases covers the explanations the realistic scenario does not reach: a
// conflict hold, a support cancel that sticks, an inactive setting, a row found too late, a
// DST overlap, and an occurrence a setting wants without a row.
func TestExplainCases(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{})
	ctx := context.Background()
	e.unit(t, store.BusinessUnit{ID: "bu-syd", Name: "Sydney", TimeZoneID: "Australia/Sydney"})
	// 02:30 on 2027-04-04 happens twice in Sydney (DST ends): the earlier is used.
	e.setting(t, true, "02:30")
	e.clock.Set(time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC))
	e.event(t, "evt-1", 1, map[string]any{"expiresOn": "2027-04-04", "staffEmail": "zoe.walker@example.test"})
	x := e.explain(t)
	if got := outcomes(x); got != "2027-03-28 Waiting/, 2027-04-04 Waiting/" {
		t.Fatalf("outcomes %s", got)
	}
	last := x.Settings[0].Occurrences[1]
	if !strings.Contains(last.DST, "occurs twice") || last.ScheduledLocal != "2027-04-04T02:30:00+11:00" || x.Settings[0].Recipients[0] != "z***@example.test" {
		t.Fatalf("DST overlap: %+v", last)
	}

	// Support cancels the 7-day one; the same source again leaves it cancelled.
	rows, _ := e.st.SchedulerListBySource(ctx, store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: expGuid, Limit: 10})
	var seven automation.SchedulerRow
	for _, r := range rows {
		if r.ScheduledLocalDate == "2027-03-28" {
			seven = r
		}
	}
	if _, err := e.svc.Cancel(ctx, automation.AllBusinessUnits(), support.ActRequest{Ref: fmt.Sprint(seven.ID), IfMatch: seven.Version, Operator: "ops.jane", Reason: "asked to stop"}); err != nil {
		t.Fatal(err)
	}
	e.event(t, "evt-2", 2, map[string]any{"expiresOn": "2027-04-04", "staffEmail": "zoe.walker@example.test", "team": "night"})
	x = e.explain(t)
	if got := outcomes(x); got != "2027-03-28 Cancelled/SupportCancelled, 2027-04-04 Waiting/" ||
		!strings.Contains(x.Settings[0].Occurrences[0].Explanation, `ops.jane`) || !strings.Contains(x.Settings[0].Occurrences[0].Explanation, "stays cancelled") {
		t.Fatalf("support cancel: %s\n%+v", got, x.Settings[0].Occurrences[0])
	}

	// The 0-day row found 3 days late: TooLate.
	zero := x.Settings[0].Occurrences[1]
	late := zero.ScheduledOn.Add(72 * time.Hour)
	claimed, _ := e.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: late, Lease: time.Minute, Limit: 10})
	if len(claimed) != 1 {
		t.Fatalf("claimed %d", len(claimed))
	}
	if err := e.st.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: claimed[0].ID, Token: claimed[0].Version, Now: late, Reason: automation.ReasonTooLate}); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(late)
	x = e.explain(t)
	if o := x.Settings[0].Occurrences[1]; o.Outcome != "NotSent" || o.ReasonCode != "TooLate" || !strings.Contains(o.Explanation, "more than 48 h") {
		t.Fatalf("too late: %+v", o)
	}

	// The setting is switched off: it applies no more, and says why.
	e.setting(t, false, "02:30")
	x = e.explain(t)
	if x.Settings[0].Applies || !strings.Contains(x.Settings[0].Why, "inactive") || !strings.Contains(x.Summary[len(x.Summary)-1], "The setting is inactive") {
		t.Fatalf("inactive setting: %+v", x.Settings[0])
	}

	// On again with a new date while a conflicting key is on hold: explained as a hold.
	e.setting(t, true, "02:30")
	e.clock.Set(time.Date(2027, 5, 1, 0, 0, 0, 0, time.UTC))
	e.event(t, "evt-3", 3, map[string]any{"expiresOn": "2027-06-30", "staffEmail": "zoe.walker@example.test"})
	rows, _ = e.st.SchedulerListBySource(ctx, store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: expGuid, Limit: 10})
	var pending automation.SchedulerRow
	for _, r := range rows {
		if r.ScheduledLocalDate == "2027-06-23" {
			pending = r
		}
	}
	c := automation.Candidate{AutomationType: pending.AutomationType, TriggerType: pending.TriggerType, SchedulerKey: pending.SchedulerKey,
		InputHash: automation.InputHash("moved business unit"), SettingGuid: pending.SettingGuid, SourceEntityType: pending.SourceEntityType,
		SourceEntityGuid: pending.SourceEntityGuid, BusinessUnitID: pending.BusinessUnitID, ScheduledOn: pending.ScheduledOn,
		ScheduledLocalDate: pending.ScheduledLocalDate, ScheduledLocalTime: pending.ScheduledLocalTime, TimeZoneID: pending.TimeZoneID}
	if _, err := e.st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: e.clock.Now(), Candidates: []automation.Candidate{c}}); err != nil {
		t.Fatal(err)
	}
	x = e.explain(t)
	found := false
	for _, o := range x.Settings[0].Occurrences {
		if o.LocalDate == "2027-06-23" {
			found = o.Outcome == "OnHold" && o.ReasonCode == "InputHashConflict" && strings.Contains(o.Explanation, "different input")
		}
	}
	if !found {
		t.Fatalf("conflict hold not explained: %s", outcomes(x))
	}

	// A new offset added to the setting after the last event: wanted, but no row yet.
	set, _ := reminder.ParseSetting([]byte(fmt.Sprintf(`{"guid":%q,"businessUnitId":"bu-syd","name":"Police check expiry",
	  "sourceType":"PoliceVetting","triggerType":"DateBased","triggerKey":"expiresOn","offsetsDays":[14,7,0],"sendLocalTime":"02:30",
	  "template":"t","channels":["log"],"recipients":{"field":"staffEmail"}}`, expSetting)))
	rec, _ := reminder.SettingRecord(set, 2, e.clock.Now())
	if err := e.st.ReminderSettingUpsert(ctx, rec); err != nil {
		t.Fatal(err)
	}
	x = e.explain(t)
	for _, o := range x.Settings[0].Occurrences {
		if o.LocalDate == "2027-06-16" && (o.Outcome != "NotCreated" || o.Row != nil || !o.Wanted || !strings.Contains(o.Explanation, "No row yet")) {
			t.Fatalf("a wanted occurrence without a row: %+v", o)
		}
	}
}

// TestScopeThatSeesNothing: a caller whose scope names no business unit sees no row, no
// source and no figure (fail closed, not "all").
func TestScopeThatSeesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{})
	e.held(t, 0, 2, "bu-a")
	ctx := context.Background()
	page, err := e.svc.Find(ctx, automation.BusinessUnits(), support.Filter{}, nil, 0)
	if err != nil || len(page.Rows) != 0 {
		t.Fatalf("find: %d rows, %v", len(page.Rows), err)
	}
	if _, err := e.svc.Get(ctx, automation.BusinessUnits(), "1"); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("get: %v", err)
	}
	if _, err := e.svc.Get(ctx, automation.Scope{}, "1"); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("get without a scope: %v", err)
	}
	m, err := e.svc.Metrics(ctx, automation.BusinessUnits(), "")
	if err != nil || m.OnHold != 0 || m.OutboxUnsent != nil {
		t.Fatalf("metrics: %+v %v", m, err)
	}
	all, _ := e.svc.Metrics(ctx, automation.AllBusinessUnits(), "")
	if all.OnHold != 2 {
		t.Fatalf("all: %+v", all)
	}
}

// Explain lists every recipient the setting would send to now (source field, the business
// unit's role list, the fixed list), masked — as execution resolves them (docs/architecture.md#revalidation).
func TestExplainListsRoleAndFixedRecipients(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{})
	ctx := context.Background()
	if err := e.st.BusinessUnitInsert(ctx, store.BusinessUnitRecord{BusinessUnit: store.BusinessUnit{ID: "bu-syd", Name: "Sydney", TimeZoneID: "Australia/Sydney"},
		Roles: map[string][]string{"managers": {"boss@example.test"}}, Version: 1, UpdatedOn: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	set, err := reminder.ParseSetting([]byte(fmt.Sprintf(`{"guid":%q,"businessUnitId":"bu-syd","name":"Police check expiry",
	  "sourceType":"PoliceVetting","triggerType":"DateBased","triggerKey":"expiresOn","offsetsDays":[7,0],"sendLocalTime":"09:00",
	  "template":"t","channels":["log"],"recipients":{"field":"staffEmail","role":"managers","fixed":["hr@example.test"]},"isActive":true}`, expSetting)))
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := reminder.SettingRecord(set, 1, e.clock.Now())
	if err := e.st.ReminderSettingUpsert(ctx, rec); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC))
	e.event(t, "evt-1", 1, map[string]any{"expiresOn": "2027-04-04", "staffEmail": "zoe.walker@example.test"})
	got := strings.Join(e.explain(t).Settings[0].Recipients, ",")
	for _, want := range []string{"z***@example.test", "b***@example.test", "h***@example.test"} {
		if !strings.Contains(got, want) {
			t.Fatalf("recipients %s lack %s", got, want)
		}
	}
}

// TestFindUnknownUnitIsNotFound: a filter naming a business unit that does not exist is a
// 404 (as one outside the scope), not an empty page that reads as "nothing is wrong".
func TestFindUnknownUnitIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{})
	ctx := context.Background()
	e.unit(t, store.BusinessUnit{ID: "bu-a", Name: "A", TimeZoneID: "UTC"})
	e.held(t, 0, 2, "bu-a")
	if page, err := e.svc.Find(ctx, automation.AllBusinessUnits(), support.Filter{BusinessUnitID: "bu-a"}, nil, 0); err != nil || len(page.Rows) != 2 {
		t.Fatalf("find bu-a: %d rows, %v", len(page.Rows), err)
	}
	if _, err := e.svc.Find(ctx, automation.AllBusinessUnits(), support.Filter{BusinessUnitID: "bu-aa"}, nil, 0); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("find an unknown unit: %v, want 404", err)
	}
}

// The figures of a business unit that does not exist, or that the scope does not see, are a
// 404 (issue 33), not zeros that read as a healthy unit; a unit that exists has its figures.
func TestMetricsOfAnUnknownOrUnseenUnitAreNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{})
	ctx := context.Background()
	e.unit(t, store.BusinessUnit{ID: "bu-a", Name: "A", TimeZoneID: "UTC"})
	for _, c := range []struct {
		scope    automation.Scope
		unit     string
		notFound bool
	}{
		{automation.AllBusinessUnits(), "bu-a", false},
		{automation.AllBusinessUnits(), "bu-aa", true},
		{automation.BusinessUnits("bu-b"), "bu-a", true},
	} {
		answer := func(err error) bool {
			return c.notFound && automation.CodeOf(err) == automation.CodeNotFound || !c.notFound && err == nil
		}
		if _, err := e.svc.Metrics(ctx, c.scope, c.unit); !answer(err) {
			t.Errorf("Metrics of %s seen by %s: %v, want not found %v", c.unit, c.scope, err, c.notFound)
		}
		if _, err := e.svc.MetricsHistory(ctx, c.scope, c.unit, 1); !answer(err) {
			t.Errorf("MetricsHistory of %s seen by %s: %v, want not found %v", c.unit, c.scope, err, c.notFound)
		}
	}
}
