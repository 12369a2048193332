package main

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/logsink"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/support"
)

// TestReadmeQuickstart runs every shell block of the README's quickstart against a live
// `serve -demo` (runReadmeSection, with the test's build of bin/automation): Amelia's
// reminder reaches serve's stdout, Noah's row is found on hold, released, and then sent;
// publishing the same event twice answers processed, then duplicate; explain says why the
// new reminder waits. The timers tick every second here instead of 30 s / 10 s; that the
// demo's rows are due at any hour is TestDemoIsDueAtAnyHour's.
func TestReadmeQuickstart(t *testing.T) {
	runReadmeSection(t, readmeSection{
		Heading: "Quickstart: a delivery, a hold released, the console",
		Env:     map[string]string{"DueWorkSchedule": "*/1 * * * * *", "OutboxRelaySchedule": "*/1 * * * * *"},
		Want: []string{
			"",
			"Failed  HOLD  bu-demo",
			"release rel-",
			"event 0: processed\nevent 0: duplicate (this source and id were processed before: nothing done)\n",
			"Police check expiry (demo): 1 waiting.",
		},
		After: func(t *testing.T, n int, stdout, logs *logsink.Buffer) {
			switch n {
			case 0:
				// The start-up log names what it serves, and nothing reads like an error.
				waitFor(t, "serve's log", logs, logs, `"msg":"serving HTTP functions"`, 5*time.Second)
				if strings.Contains(logs.String(), "not run") || strings.Contains(logs.String(), `"level":"ERROR"`) {
					t.Fatalf("start-up log:\n%s", logs.String())
				}
				waitFor(t, "serve's stdout", stdout, logs, `"businessUnitId":"bu-demo","channel":"log","recipient":"amelia.nguyen@example.test"`, 20*time.Second)
				if strings.Contains(stdout.String(), "noah.smith") {
					t.Fatalf("the held row was sent before its release:\n%s", stdout.String())
				}
			case 2:
				waitFor(t, "serve's stdout", stdout, logs, `"businessUnitId":"bu-demo","channel":"log","recipient":"noah.smith@example.test"`, 20*time.Second)
			}
		},
	})
}

// TestDemoIsDueAtAnyHour: whatever the hour in Sydney (just after midnight, midday, just
// before midnight, the DST change days), serve -demo's first reminder is Pending and due
// at once, and the second is on support hold with a HandlerError; a restart the same day
// adds nothing.
func TestDemoIsDueAtAnyHour(t *testing.T) {
	for _, at := range []string{
		"2026-12-01T13:00:01Z", // 00:00:01 AEDT
		"2026-12-01T01:00:00Z", // 12:00 AEDT
		"2026-12-01T12:59:59Z", // 23:59:59 AEDT
		"2026-10-03T16:00:00Z", // 02:00 AEST 4 October (02:00 → 03:00 AEDT that night): 03:00 AEDT
		"2027-04-03T15:30:00Z", // 02:30 AEDT on 4 April, the hour repeated at the end of DST
	} {
		t.Run(at, func(t *testing.T) {
			now, _ := time.Parse(time.RFC3339, at)
			clock := automation.NewManualClock(now)
			rt := apptest.Open(t, nil, time.Time{}, app.Options{Clock: clock}) // its own data directory, closed when t ends
			ctx := context.Background()
			for range 2 { // a restart the same day changes nothing
				if err := runDemo(ctx, rt, slog.New(slog.DiscardHandler)); err != nil {
					t.Fatal(err)
				}
			}
			sent := onlyRow(t, rt, demoSentGuid)
			if sent.Status != automation.StatusPending || sent.ScheduledOn.After(now) || now.Sub(sent.ScheduledOn) >= 24*time.Hour {
				t.Fatalf("the sent row is not due now: %s at %s (now %s)", sent.Status, sent.ScheduledOn, now)
			}
			held := onlyRow(t, rt, demoHeldGuid)
			if held.Status != automation.StatusFailed || !held.IsOnSupportHold || held.FailureReasonCode != automation.ReasonHandlerError {
				t.Fatalf("the held row: %+v", held)
			}
			// Nothing else was claimed or failed, and the claimed row's lease is gone.
			if n, err := rt.Store.SchedulerCountByStatus(ctx); err != nil || n[automation.StatusPending] != 1 || n[automation.StatusFailed] != 1 || n[automation.StatusProcessing] != 0 {
				t.Fatalf("rows by status: %v %v", n, err)
			}
		})
	}
}

func onlyRow(t *testing.T, rt *app.Runtime, guid string) automation.SchedulerRow {
	t.Helper()
	rows, err := rt.Store.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: guid, Limit: 10})
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows of %s: %v %v", guid, rows, err)
	}
	return rows[0]
}

// A due row the demo did not create (a data directory shared with other work) is given back
// due at once, never put on support hold by the demo.
func TestDemoLeavesOtherDueRowsOffHold(t *testing.T) {
	yesterday := time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC) // 12:00 AEDT, 1 December
	clock := automation.NewManualClock(yesterday)
	rt := apptest.Open(t, nil, time.Time{}, app.Options{Clock: clock}) // its own data directory, closed when t ends
	ctx := context.Background()
	// Other work in the same store: a row of the demo's setting due since yesterday 00:00
	// (never sent: serve stopped before the poll).
	if err := seedScenario(ctx, rt, []byte(demoScenario), "demo"); err != nil {
		t.Fatal(err)
	}
	const other = "d3e0d3e0-0000-4000-8000-0000000000c3"
	if _, err := demoEvent(ctx, rt, "other-1", other, "2026-12-01", "Olivia Chen", "olivia.chen@example.test"); err != nil {
		t.Fatal(err)
	}
	old := onlyRow(t, rt, other)
	today := yesterday.Add(24 * time.Hour)
	clock.Set(today)
	if err := runDemo(ctx, rt, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	got, err := rt.Store.SupportSchedulerGet(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.IsOnSupportHold || got.Status == automation.StatusProcessing || got.NextRetryOn == nil || got.NextRetryOn.After(today) {
		t.Fatalf("yesterday's due row after today's demo: %+v", got)
	}
}

// TestDemoLogSaysWhatBecameOfTheRows: serve -demo's start-up line describes the rows as they
// are. First start: Amelia's is due and Noah's on hold. After Noah's release and the sends, a
// restart the same day says both were sent and Noah's was released — never that it is still
// on hold.
func TestDemoLogSaysWhatBecameOfTheRows(t *testing.T) {
	now := time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC) // 12:00 AEDT
	clock := automation.NewManualClock(now)
	rt := apptest.Open(t, nil, time.Time{}, app.Options{Clock: clock}) // its own data directory, closed when t ends
	ctx := context.Background()
	start := func() string {
		t.Helper()
		var b strings.Builder
		if err := runDemo(ctx, rt, slog.New(slog.NewTextHandler(&b, nil))); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	first := start()
	if !strings.Contains(first, "Amelia's reminder is due") || !strings.Contains(first, "Noah's is on support hold") {
		t.Fatalf("first start: %s", first)
	}
	held := onlyRow(t, rt, demoHeldGuid)
	if _, err := rt.Support.Release(ctx, automation.AllBusinessUnits(), support.ActRequest{Ref: strconv.FormatInt(held.ID, 10), IfMatch: held.Version,
		Operator: "you", Reason: "SMTP is back"}); err != nil {
		t.Fatal(err)
	}
	clock.Set(now.Add(time.Minute))
	if _, err := rt.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	again := start()
	if strings.Contains(again, "on support hold") || !strings.Contains(again, "Noah's was released from its support hold and was sent") ||
		!strings.Contains(again, "Amelia's reminder was sent") {
		t.Fatalf("restart after the release: %s", again)
	}
}
