package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
)

// A restart with the same -seed file must not undo what the management API changed.
func TestSeedLoadsOnlyWhatIsNotStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"AUTOMATION_DATA_DIR": t.TempDir()}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := app.Open(ctx, cfg, app.Options{Clock: automation.NewManualClock(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	seed := filepath.Join("..", "testdata", "scenarios", "realistic.json")
	if err := seedFrom(ctx, rt, seed); err != nil {
		t.Fatal(err)
	}
	bu, err := rt.Store.BusinessUnitGet(ctx, "bu-syd")
	if err != nil {
		t.Fatal(err)
	}
	// Changed since (as through the API): a new name and a newer setting version.
	bu.Name = "Sydney (renamed)"
	if err := rt.Store.BusinessUnitUpsert(ctx, bu); err != nil {
		t.Fatal(err)
	}
	const guid = "0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f"
	rec, err := rt.Store.ReminderSettingGet(ctx, guid)
	if err != nil {
		t.Fatal(err)
	}
	rec.Version = 7
	rec.IsActive = false
	if err := rt.Store.ReminderSettingUpsert(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := seedFrom(ctx, rt, seed); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.Store.BusinessUnitGet(ctx, "bu-syd"); got.Name != "Sydney (renamed)" {
		t.Fatalf("seed overwrote the business unit: %+v", got)
	}
	if got, _ := rt.Store.ReminderSettingGet(ctx, guid); got.Version != 7 || got.IsActive {
		t.Fatalf("seed overwrote the setting: %+v", got)
	}
}
