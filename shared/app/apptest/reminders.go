package apptest

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

// Setting stores a reminder setting given as its JSON (reminder.ParseSetting's shape) at
// version 1, recorded as written at on (UTC). Any error fails t at once.
func Setting(t testing.TB, rt *app.Runtime, raw string, on time.Time) {
	t.Helper()
	set, err := reminder.ParseSetting([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := reminder.SettingRecord(set, 1, on)
	if err := rt.Store.ReminderSettingUpsert(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
}

// Dispatch parses one CloudEvent given as its JSON (events.Parse) and processes it at the
// runtime clock's now (rt.Events.Dispatch). Any error fails t at once.
func Dispatch(t testing.TB, rt *app.Runtime, raw string) {
	t.Helper()
	ev, err := events.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Events.Dispatch(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
}

// SourceRows returns the scheduler rows of one source entity (at most 100), in schedule
// order (ScheduledOn ascending).
func SourceRows(t testing.TB, rt *app.Runtime, entityType, guid string) []automation.SchedulerRow {
	t.Helper()
	rows, err := rt.Store.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: entityType, SourceEntityGuid: guid, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ScheduledOn.Before(rows[j].ScheduledOn) })
	return rows
}

// SupportRow reads scheduler row id as support sees it (store.SupportSchedulerGet).
func SupportRow(t testing.TB, rt *app.Runtime, id int64) automation.SchedulerRow {
	t.Helper()
	r, err := rt.Store.SupportSchedulerGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
