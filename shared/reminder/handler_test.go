package reminder_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

// claimFirst processes alice's event, moves the clock to the first occurrence and claims it.
func claimFirst(t *testing.T, f *fixture, data map[string]any) automation.SchedulerRow {
	t.Helper()
	f.mustProcess(t, event("evt-1", 1, data))
	f.clock.Set(utc("2026-09-30T23:00:00Z"))
	rows := f.claimDue(t, 1)
	return rows[0]
}

// Execution-time revalidation (docs/architecture.md#revalidation): every reason code, and the happy path.
func TestRevalidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(t *testing.T, f *fixture)
		now    string
		want   automation.ReasonCode
	}{
		{"setting deactivated", func(t *testing.T, f *fixture) {
			f.putSetting(t, strings.Replace(settingJSON("bu-syd", "[30, 7, 0]", "09:00", false), `"isActive":true`, `"isActive":false`, 1))
		}, "", automation.ReasonReminderSettingInactive},
		{"source deleted (snapshot)", func(t *testing.T, f *fixture) {
			snapshot(t, f, 2, true, alice)
		}, "", automation.ReasonSourceNoLongerValid},
		{"source inactive", func(t *testing.T, f *fixture) {
			snapshot(t, f, 2, false, with(alice, "isActive", false))
		}, "", automation.ReasonSourceNoLongerValid},
		{"date changed without an event reaching us", func(t *testing.T, f *fixture) {
			snapshot(t, f, 2, false, with(alice, "expiresOn", "2026-11-30"))
		}, "", automation.ReasonSuperseded},
		{"found due after max lateness", nil, "2026-10-02T23:00:01Z", automation.ReasonTooLate},
		{"no recipient", func(t *testing.T, f *fixture) {
			snapshot(t, f, 2, false, with(alice, "staffEmail", " "))
		}, "", reminder.ReasonNoRecipients},
		{"happy path", nil, "2026-10-02T23:00:00Z", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			row := claimFirst(t, f, alice)
			if tc.change != nil {
				tc.change(t, f)
			}
			now := f.clock.Now()
			if tc.now != "" {
				now = utc(tc.now)
			}
			out, err := f.h.Execute(context.Background(), row, now)
			if err != nil {
				t.Fatal(err)
			}
			if out.Deactivate != tc.want {
				t.Fatalf("deactivate = %q, want %q", out.Deactivate, tc.want)
			}
			if tc.want == "" {
				if len(out.Deliveries) != 1 || len(out.Outbox) != 1 || out.Deliveries[0].Recipient != "alice@example.test" {
					t.Fatalf("%+v", out)
				}
				var p reminder.Payload
				if err := json.Unmarshal([]byte(out.Deliveries[0].PayloadJSON), &p); err != nil || p.LocalTime != "2026-10-01T09:00:00+10:00" || p.TargetDate != "2026-10-31" || p.OffsetDays != 30 {
					t.Fatalf("payload %+v %v", p, err)
				}
			} else if len(out.Deliveries) != 0 {
				t.Fatal("a deactivated row must not deliver")
			}
		})
	}
}

func snapshot(t *testing.T, f *fixture, rev int64, deleted bool, data map[string]any) {
	t.Helper()
	b, _ := json.Marshal(data)
	if _, err := f.st.SourceSnapshotApply(context.Background(), store.SourceSnapshot{EntityType: "PoliceVetting", EntityGuid: "e-1", BusinessUnitID: "bu-syd",
		Revision: rev, IsDeleted: deleted, DataJSON: string(b), LastEventID: "x", UpdatedOn: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
}

func TestRecipientsResolvedAtExecution(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	row := claimFirst(t, f, alice)
	// Recipients changed after ensure: the new list is used, blanks dropped, duplicates collapse.
	snapshot(t, f, 2, false, with(alice, "staffEmail", []any{"bob@example.test", "", "carol@example.test", "BOB@example.test"}))
	out, err := f.h.Execute(context.Background(), row, f.clock.Now())
	if err != nil || len(out.Deliveries) != 2 || out.Deliveries[0].Recipient != "bob@example.test" || out.Deliveries[1].Recipient != "carol@example.test" {
		t.Fatalf("%+v %v", out.Deliveries, err)
	}
}

func TestAnnualCompletionEnsuresNextYear(t *testing.T) {
	t.Parallel()
	f, rows := annualDue(t)
	if rows[0].ScheduledLocalDate != "2026-10-01" {
		t.Fatalf("%+v", rows)
	}
	// Executed late, past midnight of the anniversary: still its own occurrence.
	out, err := f.h.Execute(context.Background(), rows[0], utc("2026-10-01T14:30:00Z"))
	if err != nil || out.Deactivate != "" || len(out.FollowUps) != 1 {
		t.Fatalf("%+v %v", out, err)
	}
	next := out.FollowUps[0]
	if next.ScheduledLocalDate != "2027-10-01" || !strings.HasSuffix(next.SchedulerKey, ":2027-10-01:0") || next.ScheduledOn.Format(time.RFC3339) != "2027-09-30T23:00:00Z" {
		t.Fatalf("follow-up %+v", next)
	}
}

func TestCorruptSettingIsPermanent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	row := claimFirst(t, f, alice)
	if err := f.st.ReminderSettingUpsert(context.Background(), store.ReminderSettingRecord{Guid: settingGuid, BusinessUnitID: "bu-syd", SourceType: "PoliceVetting",
		TriggerType: "DateBased", IsActive: true, Body: `{"guid":1}`, Version: 2, UpdatedOn: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	_, err := f.h.Execute(context.Background(), row, f.clock.Now())
	if !automation.IsPermanent(err) {
		t.Fatalf("err = %v, want permanent", err)
	}
}

func TestBadRecipientListsHoldTheRow(t *testing.T) {
	t.Parallel()
	many := make([]any, reminder.MaxRecipients+1)
	for i := range many {
		many[i] = "p@example.test"
	}
	for name, v := range map[string]any{
		"too many":         many,
		"header injection": "a@example.test\nBcc: evil@example.test",
		"not a string":     []any{"a@example.test", 5},
	} {
		f := newFixture(t)
		row := claimFirst(t, f, alice)
		snapshot(t, f, 2, false, with(alice, "staffEmail", v))
		_, err := f.h.Execute(context.Background(), row, f.clock.Now())
		if !automation.IsPermanent(err) || !strings.Contains(err.Error(), "data.staffEmail") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestSourceMovedBusinessUnitIsSuperseded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	row := claimFirst(t, f, alice)
	b, _ := json.Marshal(alice)
	if _, err := f.st.SourceSnapshotApply(context.Background(), store.SourceSnapshot{EntityType: "PoliceVetting", EntityGuid: "e-1", BusinessUnitID: "bu-nyc",
		Revision: 2, DataJSON: string(b), LastEventID: "x", UpdatedOn: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	out, err := f.h.Execute(context.Background(), row, f.clock.Now())
	if err != nil || out.Deactivate != automation.ReasonSuperseded {
		t.Fatalf("%+v %v", out, err)
	}
}
