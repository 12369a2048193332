package reminder_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite"
)

// BenchmarkSendTimePropagation measures a send-time change (docs/architecture.md#settings-changes: rows updated in place)
// over 1,000 sources with three pending rows each, on SQLite: sources/s and rows/s.
func BenchmarkSendTimePropagation(b *testing.B) {
	const sources = 1000
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	clock := automation.NewManualClock(utc("2026-09-01T00:00:00Z"))
	if err := st.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-syd", Name: "Sydney", TimeZoneID: "Australia/Sydney"}); err != nil {
		b.Fatal(err)
	}
	set, err := reminder.ParseSetting([]byte(settingJSON("bu-syd", "[30, 7, 0]", "09:00", false)))
	if err != nil {
		b.Fatal(err)
	}
	rec, _ := reminder.SettingRecord(set, 1, clock.Now())
	if err := st.ReminderSettingUpsert(ctx, rec); err != nil {
		b.Fatal(err)
	}
	svc := &reminder.Service{Store: st, Clock: clock}
	for i := 0; i < sources; i++ {
		raw := strings.Replace(string(event(fmt.Sprintf("e%d", i), 1, alice)), `"e-1"`, fmt.Sprintf(`"src-%d"`, i), 1)
		ev, _ := events.Parse([]byte(raw))
		if _, err := svc.Process(ctx, ev); err != nil {
			b.Fatal(err)
		}
	}
	admin := &reminder.Admin{Store: st, Clock: clock, Service: svc, InlineBatches: 1 << 20}
	version := int64(1)
	times := []string{"08:00", "09:00"}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		js := strings.Replace(settingJSON("bu-syd", "[30, 7, 0]", "09:00", false), `"09:00"`, `"`+times[i%2]+`"`, 1)
		res, err := admin.UpdateSetting(ctx, automation.AllBusinessUnits(), settingGuid, []byte(js), version)
		if err != nil || res.Propagation.Status != reminder.PropagationComplete || res.Propagation.RowsUpdatedInPlace != 3*sources {
			b.Fatalf("%+v %v", res.Propagation, err)
		}
		version = res.Version
	}
	el := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N*sources)/el, "sources/s")
	b.ReportMetric(float64(b.N*3*sources)/el, "rows/s")
}
