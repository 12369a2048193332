package apptest

import (
	"context"
	"fmt"
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

// The business units of the support fixtures (console, supportapi): Sydney and New York,
// whose local days differ from UTC's in opposite directions.
var (
	Sydney  = store.BusinessUnit{ID: "bu-syd", Name: "Sydney", TimeZoneID: "Australia/Sydney"}
	NewYork = store.BusinessUnit{ID: "bu-nyc", Name: "New York", TimeZoneID: "America/New_York"}
)

// PoliceCheck is a business unit with its police-check expiry reminder: setting SettingGuid
// sends at SendLocalTime ("HH:MM", the unit's local time).
type PoliceCheck struct {
	Unit                       store.BusinessUnit
	SettingGuid, SendLocalTime string
}

// PoliceChecks stores each unit and its police-check expiry setting (PoliceVetting sources,
// date-based on expiresOn, 30, 7 and 0 days before, template police-vetting-expiry on the
// log channel to staffEmail), recorded as written at on.
func PoliceChecks(t testing.TB, rt *app.Runtime, on time.Time, units ...PoliceCheck) {
	t.Helper()
	for _, u := range units {
		Units(t, rt, u.Unit)
		Setting(t, rt, fmt.Sprintf(`{"guid":%q,"businessUnitId":%q,"name":"Police check expiry",
		  "sourceType":"PoliceVetting","triggerType":"DateBased","triggerKey":"expiresOn","offsetsDays":[30,7,0],"sendLocalTime":%q,
		  "template":"police-vetting-expiry","channels":["log"],"recipients":{"field":"staffEmail"}}`, u.SettingGuid, u.Unit.ID, u.SendLocalTime), on)
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

// Sources reads the scheduler rows of one source entity type (EntityType, "PoliceVetting")
// in a runtime; a test's env embeds it. Any error fails t at once.
type Sources struct {
	RT         *app.Runtime
	EntityType string
}

// RowsOf returns the rows of source guid (at most 100), in schedule order (ScheduledOn
// ascending).
func (s Sources) RowsOf(t testing.TB, guid string) []automation.SchedulerRow {
	t.Helper()
	rows, err := s.RT.Store.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: s.EntityType, SourceEntityGuid: guid, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ScheduledOn.Before(rows[j].ScheduledOn) })
	return rows
}

// Row reads scheduler row id as support sees it (store.SupportSchedulerGet).
func (s Sources) Row(t testing.TB, id int64) automation.SchedulerRow {
	t.Helper()
	r, err := s.RT.Store.SupportSchedulerGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
