package reminder_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/automation/automationtest"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/reminder"
)

const settingGuid = "0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f"

func mustSetting(t *testing.T, js string) reminder.Setting {
	t.Helper()
	s, err := reminder.ParseSetting([]byte(js))
	if err != nil {
		t.Fatalf("setting: %v", err)
	}
	return s
}

func settingJSON(bu, offsets, at string, annual bool) string {
	a := ""
	if annual {
		a = `"annual": true,`
	}
	return `{"guid":"` + settingGuid + `","businessUnitId":"` + bu + `","name":"Expiry","sourceType":"PoliceVetting",
	  "triggerType":"DateBased","triggerKey":"expiresOn","offsetsDays":` + offsets + `,"sendLocalTime":"` + at + `",` + a + `
	  "template":"tpl","channels":["log"],"recipients":{"field":"staffEmail"},"isActive":true}`
}

func zone(t *testing.T, bu, id string) reminder.Zone {
	t.Helper()
	loc, err := localtime.LoadZone(id)
	if err != nil {
		t.Fatal(err)
	}
	return reminder.Zone{BusinessUnitID: bu, TimeZoneID: id, Loc: loc}
}

var utc = automationtest.Instant

// Expected instants come from the DST oracle (docs/architecture.md#dst-oracle; Python zoneinfo), e.g.
// `tzoracle.py Australia/Sydney 2026-10-31 09:00 7`, not from our own code.
func TestDateOccurrencesAgainstOracle(t *testing.T) {
	t.Parallel()
	cases := []struct {
		zone, target, at string
		offset           int
		wantLocal        string
		wantUTC          string
	}{
		{"Australia/Sydney", "2026-10-31", "09:00", 30, "2026-10-01", "2026-09-30T23:00:00Z"}, // before DST start: +10
		{"Australia/Sydney", "2026-10-31", "09:00", 7, "2026-10-24", "2026-10-23T22:00:00Z"},  // after: +11
		{"Australia/Sydney", "2026-10-31", "09:00", 0, "2026-10-31", "2026-10-30T22:00:00Z"},
		{"America/New_York", "2027-03-31", "09:00", 30, "2027-03-01", "2027-03-01T14:00:00Z"},   // month end, across DST
		{"America/New_York", "2026-03-01", "09:00", 1, "2026-02-28", "2026-02-28T14:00:00Z"},    // common-year February
		{"Asia/Ho_Chi_Minh", "2028-03-01", "08:00", 1, "2028-02-29", "2028-02-29T01:00:00Z"},    // leap day
		{"Australia/Sydney", "2026-10-18", "02:30", 14, "2026-10-04", "2026-10-03T16:30:00Z"},   // gap → 03:30 AEDT
		{"America/New_York", "2026-11-08", "01:30", 7, "2026-11-01", "2026-11-01T05:30:00Z"},    // overlap → earlier (EDT)
		{"Asia/Kathmandu", "2026-12-25", "09:00", 0, "2026-12-25", "2026-12-25T03:15:00Z"},      // +05:45
		{"Australia/Lord_Howe", "2026-10-04", "02:15", 0, "2026-10-04", "2026-10-03T15:45:00Z"}, // 30-min gap → 02:45
		// After-offsets (negative: days after the target date), same oracle: `tzoracle.py Australia/Sydney 2026-07-06 02:30 -90`.
		{"Australia/Sydney", "2026-07-06", "02:30", -90, "2026-10-04", "2026-10-03T16:30:00Z"}, // 90 days after, into the DST gap → 03:30 AEDT
		{"Australia/Sydney", "2026-01-05", "02:00", -90, "2026-04-05", "2026-04-04T15:00:00Z"}, // fall-back overlap → earlier (+11)
		{"America/New_York", "2026-08-03", "01:30", -90, "2026-11-01", "2026-11-01T05:30:00Z"}, // overlap → earlier (EDT)
		{"Asia/Vientiane", "2026-03-03", "10:00", -90, "2026-06-01", "2026-06-01T03:00:00Z"},   // no DST, +07
		{"Asia/Ho_Chi_Minh", "2026-12-31", "23:30", -1, "2027-01-01", "2027-01-01T16:30:00Z"},  // across New Year
	}
	for _, tc := range cases {
		t.Run(tc.zone+"/"+tc.target+"-"+tc.wantLocal, func(t *testing.T) {
			t.Parallel()
			set := mustSetting(t, settingJSON("bu", "["+itoa(tc.offset)+"]", tc.at, false))
			src := reminder.Source{EntityType: "PoliceVetting", EntityGuid: "e-1", BusinessUnitID: "bu", Data: map[string]any{"expiresOn": tc.target}}
			occ, err := reminder.DateOccurrences(set, src, zone(t, "bu", tc.zone), localtime.MustDate("2026-01-01"), utc("2026-01-01T00:00:00Z"), true)
			if err != nil || len(occ) != 1 {
				t.Fatalf("%v %v", occ, err)
			}
			o := occ[0]
			if o.ScheduledLocalDate != tc.wantLocal || !o.ScheduledOn.Equal(utc(tc.wantUTC)) || o.MissedReason != "" {
				t.Fatalf("got %s %s missed=%q, want %s %s", o.ScheduledLocalDate, o.ScheduledOn.Format(time.RFC3339), o.MissedReason, tc.wantLocal, tc.wantUTC)
			}
			if o.ScheduledLocalTime != tc.at || o.TimeZoneID != tc.zone {
				t.Fatalf("local intent %s %s", o.ScheduledLocalTime, o.TimeZoneID)
			}
			if !strings.HasSuffix(o.SchedulerKey, ":expiresOn:"+tc.target+":"+itoa(tc.offset)) {
				t.Fatalf("key %s", o.SchedulerKey)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// expiresOn is police vetting e-1 (no business unit) expiring on date (YYYY-MM-DD).
func expiresOn(date string) reminder.Source {
	return reminder.Source{EntityType: "PoliceVetting", EntityGuid: "e-1", Data: map[string]any{"expiresOn": date}}
}

// mustOccurrencesOn is occurrencesOn marking missed occurrences, failing t on an error.
func mustOccurrencesOn(t *testing.T, set reminder.Setting, src reminder.Source, z reminder.Zone, now time.Time) []reminder.Occurrence {
	t.Helper()
	occ, err := occurrencesOn(set, src, z, now, true)
	if err != nil {
		t.Fatal(err)
	}
	return occ
}

// occurrencesOn is reminder.DateOccurrences as seen at now, today being now's local date in z.
func occurrencesOn(set reminder.Setting, src reminder.Source, z reminder.Zone, now time.Time, markMissed bool) ([]reminder.Occurrence, error) {
	return reminder.DateOccurrences(set, src, z, localtime.DateOf(now, z.Loc), now, markMissed)
}

// The late rule (docs/architecture.md#late-rule): a passed send time on today's local date is sent now; older ones
// are recorded MissedWindow.
func TestLateRule(t *testing.T) {
	t.Parallel()
	set := mustSetting(t, settingJSON("bu", "[30, 7, 0]", "09:00", false))
	src := expiresOn("2026-10-31")
	z := zone(t, "bu", "Australia/Sydney")
	// 2026-10-24 11:00 AEDT: offset 30 (10-01) is older → missed; offset 7 (10-24 09:00) is
	// today → kept, due in the past; offset 0 is in the future.
	now := utc("2026-10-24T00:00:00Z")
	occ := mustOccurrencesOn(t, set, src, z, now)
	want := map[int]automation.ReasonCode{30: automation.ReasonMissedWindow, 7: "", 0: ""}
	for _, o := range occ {
		if o.MissedReason != want[o.OffsetDays] {
			t.Errorf("offset %d: missed=%q want %q", o.OffsetDays, o.MissedReason, want[o.OffsetDays])
		}
	}
	if !occ[1].ScheduledOn.Before(now) {
		t.Fatal("today's passed occurrence keeps its scheduled instant (due now)")
	}
	// Revalidation (markMissed=false) never marks.
	occ, _ = occurrencesOn(set, src, z, now, false)
	for _, o := range occ {
		if o.MissedReason != "" {
			t.Fatal("markMissed=false must not mark")
		}
	}
}

// The late rule applies to after-offsets exactly as to before-offsets: an occurrence 90
// days after a date whose local day has passed is MissedWindow, one due earlier today is
// kept (sent now), one in the future waits. A before- and an after-offset of one setting
// are independent rows (distinct keys ending ":30" and ":-30").
func TestLateRuleAfterOffsets(t *testing.T) {
	t.Parallel()
	set := mustSetting(t, settingJSON("bu", "[30, -30, -90]", "09:00", false))
	z := zone(t, "bu", "Asia/Vientiane")
	// now = 2026-06-01 11:00 +07 (04:00Z).
	now := utc("2026-06-01T04:00:00Z")
	src := expiresOn("2026-03-03")
	occ, err := occurrencesOn(set, src, z, now, true)
	if err != nil || len(occ) != 3 {
		t.Fatal(occ, err)
	}
	// Hand-computed: 2026-03-03 −30 → 2026-02-01 (missed), +30 → 2026-04-02 (missed),
	// +90 → 2026-06-01 09:00 +07 = 02:00Z, today → kept, due in the past.
	want := []struct {
		local, utc string
		missed     automation.ReasonCode
		suffix     string
	}{
		{"2026-02-01", "2026-02-01T02:00:00Z", automation.ReasonMissedWindow, ":2026-03-03:30"},
		{"2026-04-02", "2026-04-02T02:00:00Z", automation.ReasonMissedWindow, ":2026-03-03:-30"},
		{"2026-06-01", "2026-06-01T02:00:00Z", "", ":2026-03-03:-90"},
	}
	for i, w := range want {
		o := occ[i]
		if o.ScheduledLocalDate != w.local || !o.ScheduledOn.Equal(utc(w.utc)) || o.MissedReason != w.missed || !strings.HasSuffix(o.SchedulerKey, w.suffix) {
			t.Errorf("offset %d: %s %s missed=%q key %s, want %+v", o.OffsetDays, o.ScheduledLocalDate, o.ScheduledOn.Format(time.RFC3339), o.MissedReason, o.SchedulerKey, w)
		}
	}
	if occ[1].SchedulerKey == occ[0].SchedulerKey || occ[1].InputHash == occ[0].InputHash {
		t.Fatal("30 before and 30 after must be distinct occurrences")
	}
	// The next day the -90 occurrence is older than today: missed.
	later := utc("2026-06-02T04:00:00Z")
	occ, _ = occurrencesOn(set, src, z, later, true)
	if occ[2].MissedReason != automation.ReasonMissedWindow {
		t.Fatalf("a day later: %+v", occ[2])
	}
}

// An annual setting may remind after each anniversary too (within ±364 days): the chain
// of a -7 offset moves to the next anniversary whose occurrence is on or after today.
func TestAnnualAfterOffset(t *testing.T) {
	t.Parallel()
	set := mustSetting(t, settingJSON("bu", "[-7]", "08:00", true))
	src := expiresOn("2020-02-29")
	z := zone(t, "bu", "Asia/Ho_Chi_Minh")
	now := utc("2027-03-03T00:00:00Z") // 07:00 local on 2027-03-03: before 2027-03-07 (28 Feb + 7)
	occ, err := occurrencesOn(set, src, z, now, true)
	if err != nil || len(occ) != 1 {
		t.Fatal(occ, err)
	}
	if occ[0].Target.String() != "2027-02-28" || occ[0].ScheduledLocalDate != "2027-03-07" || occ[0].MissedReason != "" {
		t.Fatalf("%+v", occ[0])
	}
	next, err := reminder.FollowingYear(set, src, z, occ[0])
	if err != nil || next.Target.String() != "2028-02-29" || next.ScheduledLocalDate != "2028-03-07" {
		t.Fatalf("following %+v %v", next, err)
	}
	// After 2027-03-07 the chain has moved on to 2028.
	now = utc("2027-03-08T00:00:00Z")
	occ, _ = occurrencesOn(set, src, z, now, true)
	if occ[0].Target.String() != "2028-02-29" || occ[0].MissedReason != "" {
		t.Fatalf("after this year's: %+v", occ[0])
	}
}

func TestNextAnniversary(t *testing.T) {
	t.Parallel()
	d := localtime.MustDate
	cases := []struct{ orig, ref, want string }{
		{"2020-02-29", "2027-01-01", "2027-02-28"}, // common year
		{"2020-02-29", "2027-03-01", "2028-02-29"}, // leap year
		{"2019-10-15", "2026-10-15", "2026-10-15"}, // on the day
		{"2019-10-15", "2026-10-16", "2027-10-15"},
		{"2026-12-01", "2026-09-01", "2027-12-01"}, // the first anniversary, not the hire date
		{"2026-09-01", "2026-09-01", "2027-09-01"},
		{"1999-12-31", "2026-12-31", "2026-12-31"},
	}
	for _, tc := range cases {
		if got := reminder.NextAnniversary(d(tc.orig), d(tc.ref)); got.String() != tc.want {
			t.Errorf("NextAnniversary(%s, %s) = %s, want %s", tc.orig, tc.ref, got, tc.want)
		}
	}
}

func TestAnnualFollowingYear(t *testing.T) {
	t.Parallel()
	set := mustSetting(t, settingJSON("bu", "[7, 0]", "08:00", true))
	src := expiresOn("2020-02-29")
	z := zone(t, "bu", "Asia/Ho_Chi_Minh")
	now := utc("2027-01-10T00:00:00Z")
	occ := mustOccurrencesOn(t, set, src, z, now)
	if occ[0].Target.String() != "2027-02-28" || occ[0].ScheduledLocalDate != "2027-02-21" || occ[1].ScheduledLocalDate != "2027-02-28" {
		t.Fatalf("occurrences %+v", occ)
	}
	next, err := reminder.FollowingYear(set, src, z, occ[0])
	if err != nil || next.Target.String() != "2028-02-29" || next.ScheduledLocalDate != "2028-02-22" || next.OffsetDays != 7 {
		t.Fatalf("following %+v %v", next, err)
	}
}

func TestTriggerDateBadInput(t *testing.T) {
	t.Parallel()
	set := mustSetting(t, settingJSON("bu", "[0]", "09:00", false))
	for _, v := range []any{"2027-02-30", "2026-13-01", "31/12/2026", "2026-12-01T00:00:00Z", 20261201.0, true, map[string]any{}} {
		_, _, err := reminder.TriggerDate(set, map[string]any{"expiresOn": v})
		if !automation.IsInvalid(err) || !strings.Contains(err.Error(), "data.expiresOn") {
			t.Errorf("%v: err = %v", v, err)
		}
	}
	for _, data := range []map[string]any{{}, {"expiresOn": nil}} {
		if _, ok, err := reminder.TriggerDate(set, data); ok || err != nil {
			t.Errorf("%v: absent/null means no reminder, got ok=%v err=%v", data, ok, err)
		}
	}
}

func TestParseSettingRejectsBadInput(t *testing.T) {
	t.Parallel()
	base := settingJSON("bu", "[30, 7, 0]", "09:00", false)
	mutate := func(old, new string) string { return strings.Replace(base, old, new, 1) }
	cases := []refusedSetting{
		{"duplicate offset", mutate("[30, 7, 0]", "[7, 7]"), "offsetsDays[1]"},
		{"no offsets", mutate("[30, 7, 0]", "[]"), "offsetsDays"},
		{"25:00", mutate(`"09:00"`, `"25:00"`), "25:00"},
		{"send time missing", mutate(`"sendLocalTime":"09:00",`, ``), "sendLocalTime"},
		{"unknown field", mutate(`"name":"Expiry"`, `"name":"Expiry","colour":"red"`), "colour"},
		{"empty channels", mutate(`["log"]`, `[]`), "channels"},
		{"bad guid", mutate(settingGuid, "nope"), "guid"},
		{"threshold without a threshold", mutate(`"DateBased"`, `"ThresholdCondition"`), "threshold: is required"},
		{"unknown trigger type", mutate(`"DateBased"`, `"Hourly"`), "triggerType"},
		{"no recipients", mutate(`{"field":"staffEmail"}`, `{}`), "recipients: needs field"},
		{"bad recipient field", mutate(`{"field":"staffEmail"}`, `{"field":"a b"}`), "recipients.field"},
		{"blank fixed recipient", mutate(`{"field":"staffEmail"}`, `{"fixed":[" "]}`), "recipients.fixed[0]"},
		{"overdue and annual", strings.Replace(settingJSON("bu", "[0]", "09:00", true), `"annual": true,`, `"annual": true, "immediateIfOverdue": true,`, 1), "immediateIfOverdue"},
		{"annual offset too big", settingJSON("bu", "[400]", "09:00", true), "offsetsDays[0]"},
		{"annual after-offset too big", settingJSON("bu", "[-365]", "09:00", true), "offsetsDays[0]"},
		{"after-offset over ten years", mutate("[30, 7, 0]", "[-3651]"), "offsetsDays[0]"},
		{"not json", `{"guid":`, "setting"},
	}
	checkSettingsRefused(t, cases)
}

// refusedSetting is a setting ParseSetting must refuse (js) naming field.
type refusedSetting struct{ name, js, field string }

// checkSettingsRefused checks each case in a parallel subtest.
func checkSettingsRefused(t *testing.T, cases []refusedSetting) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := reminder.ParseSetting([]byte(tc.js))
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err = %v, want mention of %s", err, tc.field)
			}
		})
	}
}
