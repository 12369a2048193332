package automation_test

import (
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

const setG = "0F8F6B1E-5D7A-4C41-9D0E-6B1C2A3D4E5F"

func TestReminderDateKeyCanonical(t *testing.T) {
	t.Parallel()
	got, err := automation.ReminderDateKey(setG, "PoliceVetting", "3B2D6F0E-1A4C-4D8E-9B7A-2C5E8F1A3D6B", "expiresOn", "2026-10-31", 30)
	if err != nil {
		t.Fatal(err)
	}
	want := "reminder:0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f:PoliceVetting:3b2d6f0e-1a4c-4d8e-9b7a-2c5e8f1a3d6b:expiresOn:2026-10-31:30"
	if got != want {
		t.Fatalf("key\n got %s\nwant %s", got, want)
	}
}

// An after-offset (negative: days after the target) is its own key component "-90",
// never equal to the before-offset "90".
func TestReminderDateKeyAfterOffset(t *testing.T) {
	t.Parallel()
	after, err := automation.ReminderDateKey(setG, "Customer", "CUST-1", "lastTransactionOn", "2026-03-03", -90)
	if err != nil {
		t.Fatal(err)
	}
	if want := "reminder:0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f:Customer:CUST-1:lastTransactionOn:2026-03-03:-90"; after != want {
		t.Fatalf("key\n got %s\nwant %s", after, want)
	}
	before, _ := automation.ReminderDateKey(setG, "Customer", "CUST-1", "lastTransactionOn", "2026-03-03", 90)
	if before == after {
		t.Fatal("90 before and 90 after share a key")
	}
}

func TestKeyRejectsBadComponents(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                              string
		setting, srcType, src, trig, date string
		offset                            int
		wantInErr                         string
	}{
		{"setting not a guid", "abc", "T", "s", "k", "2026-01-01", 0, "settingGuid"},
		{"colon in source", setG, "T", "a:b", "k", "2026-01-01", 0, "sourceGuid"},
		{"space in type", setG, "Po lice", "s", "k", "2026-01-01", 0, "sourceType"},
		{"empty trigger key", setG, "T", "s", "", "2026-01-01", 0, "triggerKey"},
		{"date with time", setG, "T", "s", "k", "2026-01-01T00:00", 0, "targetDate"},
		{"offset over ten years after", setG, "T", "s", "k", "2026-01-01", -3651, "offsetDays"},
		{"offset over ten years before", setG, "T", "s", "k", "2026-01-01", 3651, "offsetDays"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := automation.ReminderDateKey(tc.setting, tc.srcType, tc.src, tc.trig, tc.date, tc.offset)
			if err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
				t.Fatalf("err = %v, want mention of %s", err, tc.wantInErr)
			}
		})
	}
}

func TestThresholdAndReportKeys(t *testing.T) {
	t.Parallel()
	tk, err := automation.ThresholdKey("bookedRatio", 0.90, "OncePerThreshold", "src")
	if err != nil || tk != "bookedRatio:0.9:OncePerThreshold:src" {
		t.Fatalf("threshold key %q %v (numbers without trailing zeros)", tk, err)
	}
	tk100, _ := automation.ThresholdKey("pct", 100, "OncePerDay", "d2026-10-01")
	if tk100 != "pct:100:OncePerDay:d2026-10-01" {
		t.Fatalf("got %q", tk100)
	}
	anyKey, _ := automation.ThresholdKeyAny("pct", "OncePerSource", "src")
	if anyKey != "pct:any:OncePerSource:src" {
		t.Fatalf("got %q", anyKey)
	}
	rk, err := automation.ReminderThresholdKey(setG, "ClassSession", "s-1", "booked", tk)
	if err != nil || rk != "reminder:0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f:ClassSession:s-1:booked:threshold:bookedRatio:0.9:OncePerThreshold:src" {
		t.Fatalf("got %q %v", rk, err)
	}
	sydney, _ := time.LoadLocation("UTC")
	at := time.Date(2026, 10, 5, 8, 0, 0, 0, sydney).Add(-11 * time.Hour)
	sk, err := automation.ReportScheduledKey(setG, at)
	if err != nil || sk != "report-subscription:0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f:scheduled:2026-10-04T21:00:00Z" {
		t.Fatalf("got %q %v", sk, err)
	}
	mk, err := automation.ReportManualKey(setG, "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE")
	if err != nil || mk != "report-subscription:0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f:manual:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee" {
		t.Fatalf("got %q %v", mk, err)
	}
	if _, err := automation.ReportManualKey(setG, "not-a-guid"); err == nil {
		t.Fatal("manualRunGuid must be a GUID")
	}
}

func TestShortenKeyIsStableAndVisible(t *testing.T) {
	t.Parallel()
	long := "reminder:" + strings.Repeat("x", 600)
	a, b := automation.ShortenKey(long), automation.ShortenKey(long)
	if a != b || len(a) != automation.MaxSchedulerKeyLength || !strings.Contains(a, "#sha256=") {
		t.Fatalf("shortened key %q (len %d)", a, len(a))
	}
	other := automation.ShortenKey(long[:len(long)-1] + "y")
	if other == a {
		t.Fatal("keys differing only past the kept prefix must not collide")
	}
	if !strings.HasPrefix(a, long[:100]) {
		t.Fatal("the readable prefix must be kept")
	}
	exact := strings.Repeat("k", automation.MaxSchedulerKeyLength)
	if automation.ShortenKey(exact) != exact {
		t.Fatal("a key that fits must be unchanged")
	}
	// A long source id goes through the helper.
	k, err := automation.ReminderDateKey(setG, "T", strings.Repeat("s", 500), "k", "2026-01-01", 0)
	if err != nil || len(k) != automation.MaxSchedulerKeyLength {
		t.Fatalf("long key %d %v", len(k), err)
	}
}

func TestInputHashDeterministic(t *testing.T) {
	t.Parallel()
	type in struct {
		A string `json:"a"`
		B int    `json:"b"`
	}
	h1, h2 := automation.InputHash(in{"x", 1}), automation.InputHash(in{"x", 1})
	if h1 != h2 || len(h1) != 64 || strings.ToLower(h1) != h1 {
		t.Fatalf("hash %q %q", h1, h2)
	}
	if automation.InputHash(in{"x", 2}) == h1 {
		t.Fatal("different input, same hash")
	}
	if automation.InputHash(map[string]int{"b": 1, "a": 2}) != automation.InputHash(map[string]int{"a": 2, "b": 1}) {
		t.Fatal("map order must not matter")
	}
}
