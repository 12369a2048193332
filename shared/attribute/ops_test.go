package attribute

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/automation/automationtest"
	"github.com/automation-platform/automation/shared/localtime"
)

func zone(t *testing.T, id string) Rules {
	t.Helper()
	loc, err := localtime.LoadZone(id)
	if err != nil {
		t.Fatal(err)
	}
	return Rules{Zone: loc, ZoneID: id, WeekStart: time.Monday}
}

// applyOnDays applies in to states once at each instant of days (RFC 3339, in order),
// keeping the changed states, and returns whether each threshold crossing fired, in order.
func applyOnDays(t *testing.T, states map[string]State, in Instruction, rules func(Instruction) (Rules, error), days ...string) []bool {
	t.Helper()
	var fired []bool
	for _, d := range days {
		changed, fs, err := ApplyEntity(states, []Instruction{in}, at(d), rules)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range changed {
			states[k] = v
		}
		for _, f := range fs {
			fired = append(fired, f.Fired)
		}
	}
	return fired
}

var at = automationtest.Instant

func num(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func maxItems(n int) *int { return &n }

// TestPeriodKeyBoundaries: the period of an instant is a calendar period in the zone, with
// the week starting on Monday unless told otherwise. The expected local dates come from
// Python's zoneinfo (the repository's independent oracle), not from this package:
//
//	2026-07-12T13:59Z Sydney = Sun 2026-07-12 23:59 +10:00; 14:00Z = Mon 2026-07-13 00:00
//	2026-07-13T03:59Z New York = Sun 2026-07-12 23:59 -04:00; 04:00Z = Mon 00:00
//	2026-10-03T14:00Z Sydney = Sun 2026-10-04 00:00 +10:00 (DST starts that day)
//	2026-10-04T12:59Z Sydney = Sun 2026-10-04 23:59 +11:00; 13:00Z = Mon 2026-10-05 00:00
//	2026-11-02T04:59Z New York = Sun 2026-11-01 23:59 -05:00 (DST ended that day)
//	2026-03-09T03:59Z New York = Sun 2026-03-08 23:59 -04:00 (DST started that day)
//	2026-12-31T17:00Z Ho Chi Minh City = Fri 2027-01-01 00:00 +07:00
func TestPeriodKeyBoundaries(t *testing.T) {
	syd, ny, hcm := zone(t, "Australia/Sydney"), zone(t, "America/New_York"), zone(t, "Asia/Ho_Chi_Minh")
	nySun := ny
	nySun.WeekStart = time.Sunday
	cases := []struct {
		name   string
		period string
		at     string
		r      Rules
		want   string
	}{
		{"Sydney Sunday night is last week", PeriodWeekly, "2026-07-12T13:59:00Z", syd, "W2026-07-06"},
		{"Sydney Monday 00:00 is a new week (UTC still Sunday)", PeriodWeekly, "2026-07-12T14:00:00Z", syd, "W2026-07-13"},
		{"Sydney day boundary", PeriodDaily, "2026-07-12T14:00:00Z", syd, "2026-07-13"},
		{"New York Sunday 23:59 (UTC already Monday)", PeriodWeekly, "2026-07-13T03:59:00Z", ny, "W2026-07-06"},
		{"New York Monday 00:00", PeriodWeekly, "2026-07-13T04:00:00Z", ny, "W2026-07-13"},
		{"New York, week starting Sunday", PeriodWeekly, "2026-07-13T03:59:00Z", nySun, "W2026-07-12"},
		{"Sydney DST start day begins at 14:00Z", PeriodDaily, "2026-10-03T14:00:00Z", syd, "2026-10-04"},
		{"Sydney DST start day ends at 12:59Z (23 h long)", PeriodDaily, "2026-10-04T12:59:00Z", syd, "2026-10-04"},
		{"Sydney after DST start day", PeriodDaily, "2026-10-04T13:00:00Z", syd, "2026-10-05"},
		{"New York DST end day ends at 04:59Z next day (25 h long)", PeriodDaily, "2026-11-02T04:59:00Z", ny, "2026-11-01"},
		{"New York DST start day", PeriodDaily, "2026-03-09T03:59:00Z", ny, "2026-03-08"},
		{"Ho Chi Minh City New Year", PeriodYearly, "2026-12-31T17:00:00Z", hcm, "2027"},
		{"Ho Chi Minh City old year", PeriodYearly, "2026-12-31T16:59:00Z", hcm, "2026"},
		{"New York month (UTC already January)", PeriodMonthly, "2027-01-01T04:59:00Z", ny, "2026-12"},
		{"lifetime", PeriodLifetime, "2027-01-01T04:59:00Z", ny, ""},
	}
	for _, c := range cases {
		if got := PeriodKey(c.period, at(c.at), c.r); got != c.want {
			t.Errorf("%s: PeriodKey(%s, %s) = %q, want %q", c.name, c.period, c.at, got, c.want)
		}
	}
}

func numberState(v, period, rule string, last string) State {
	return State{Exists: true, Type: TypeNumber, Number: num(v), Period: period, PeriodRule: rule, LastEventOn: at(last)}
}

// TestOperations is seed 003's operation table, one row per behaviour.
func TestOperations(t *testing.T) {
	syd, ny, hcm := zone(t, "Australia/Sydney"), zone(t, "America/New_York"), zone(t, "Asia/Ho_Chi_Minh")
	weeklySyd := PeriodRule(PeriodWeekly, syd)
	dailySyd := streakPrefix + PeriodRule(PeriodDaily, syd)
	dailyNY := streakPrefix + PeriodRule(PeriodDaily, ny)
	th := func(v string, reset string) Threshold {
		return Threshold{Value: json.Number(v), TriggerEvent: "T" + v, ResetPolicy: reset}
	}
	thu := func(v, unit string) Threshold {
		return Threshold{Value: json.Number(v), Unit: unit, TriggerEvent: "T" + v}
	}
	type want struct {
		value    string // FormatValue of the new state
		period   string
		fired    []string // threshold values that crossed
		errPart  string
		lastSeen string
	}
	cases := []struct {
		name string
		old  State
		in   Instruction
		at   string
		r    Rules
		want want
	}{
		// INCREMENT / DECREMENT with lazy reset
		{"increment from no row (null state = new period)", State{}, Instruction{AttributeCode: "c", Operation: OpIncrement, Period: PeriodWeekly, Step: "1"},
			"2026-07-08T00:00:00Z", syd, want{value: "1", period: "W2026-07-06"}},
		{"increment in the same week", numberState("4", "W2026-07-06", weeklySyd, "2026-07-07T00:00:00Z"), Instruction{AttributeCode: "c", Operation: OpIncrement, Period: PeriodWeekly, Step: "2.5"},
			"2026-07-12T13:59:00Z", syd, want{value: "6.5", period: "W2026-07-06"}},
		{"increment lazily resets in a new week (Sydney Monday 00:00)", numberState("4", "W2026-07-06", weeklySyd, "2026-07-07T00:00:00Z"), Instruction{AttributeCode: "c", Operation: OpIncrement, Period: PeriodWeekly, Step: "1"},
			"2026-07-12T14:00:00Z", syd, want{value: "1", period: "W2026-07-13"}},
		{"a late event of a closed week counts nowhere", numberState("3", "W2026-07-13", weeklySyd, "2026-07-14T00:00:00Z"), Instruction{AttributeCode: "c", Operation: OpIncrement, Period: PeriodWeekly},
			"2026-07-12T13:00:00Z", syd, want{value: "3", period: "W2026-07-13"}},
		{"lifetime increment with default step", numberState("41", "", "", "2020-01-01T00:00:00Z"), Instruction{AttributeCode: "c", Operation: OpIncrement},
			"2026-07-12T13:00:00Z", syd, want{value: "42"}},
		{"crossing 9 -> 10 fires once (old < t <= new)", numberState("9", "", "", "2026-07-01T00:00:00Z"), Instruction{AttributeCode: "c", Operation: OpIncrement, Thresholds: []Threshold{th("10", ResetNone)}},
			"2026-07-02T00:00:00Z", syd, want{value: "10", fired: []string{"10"}}},
		{"10 -> 11 does not fire again", numberState("10", "", "", "2026-07-01T00:00:00Z"), Instruction{AttributeCode: "c", Operation: OpIncrement, Thresholds: []Threshold{th("10", ResetNone)}},
			"2026-07-02T00:00:00Z", syd, want{value: "11"}},
		{"a jump over two thresholds fires both", numberState("4", "", "", "2026-07-01T00:00:00Z"), Instruction{AttributeCode: "c", Operation: OpIncrement, Step: "10", Thresholds: []Threshold{th("5", ResetNone), th("10", ResetNone), th("20", ResetNone)}},
			"2026-07-02T00:00:00Z", syd, want{value: "14", fired: []string{"5", "10"}}},
		{"RESET_ON_TRIGGER sets the counter to 0 after its crossing", numberState("9", "W2026-07-06", weeklySyd, "2026-07-07T00:00:00Z"), Instruction{AttributeCode: "c", Operation: OpIncrement, Period: PeriodWeekly, Thresholds: []Threshold{th("10", ResetOnTrigger)}},
			"2026-07-08T00:00:00Z", syd, want{value: "0", period: "W2026-07-06", fired: []string{"10"}}},
		{"decrement crosses downwards (old > t >= new)", numberState("3", "", "", "2026-07-01T00:00:00Z"), Instruction{AttributeCode: "c", Operation: OpDecrement, Step: "1", Thresholds: []Threshold{th("2", ResetNone)}},
			"2026-07-02T00:00:00Z", syd, want{value: "2", fired: []string{"2"}}},
		{"decrement from the threshold down does not fire again (2 -> 1)", numberState("2", "", "", "2026-07-01T00:00:00Z"), Instruction{AttributeCode: "c", Operation: OpDecrement, Step: "1", Thresholds: []Threshold{th("2", ResetNone)}},
			"2026-07-02T00:00:00Z", syd, want{value: "1"}},
		{"decrement already below the threshold does not fire again (1 -> 0)", numberState("1", "", "", "2026-07-01T00:00:00Z"), Instruction{AttributeCode: "c", Operation: OpDecrement, Step: "1", Thresholds: []Threshold{th("2", ResetNone)}},
			"2026-07-02T00:00:00Z", syd, want{value: "0"}},
		{"a decrement jump over two thresholds fires both, not the one below", numberState("10", "", "", "2026-07-01T00:00:00Z"), Instruction{AttributeCode: "c", Operation: OpDecrement, Step: "7", Thresholds: []Threshold{th("1", ResetNone), th("5", ResetNone), th("9", ResetNone)}},
			"2026-07-02T00:00:00Z", syd, want{value: "3", fired: []string{"5", "9"}}},
		{"decrement on a new day starts from 0", numberState("3", "2026-07-01", PeriodRule(PeriodDaily, ny), "2026-07-01T12:00:00Z"), Instruction{AttributeCode: "c", Operation: OpDecrement, Period: PeriodDaily},
			"2026-07-02T12:00:00Z", ny, want{value: "-1", period: "2026-07-02"}},
		{"increment on a boolean is permanent", State{Exists: true, Type: TypeBoolean, Bool: true}, Instruction{AttributeCode: "flag", Operation: OpIncrement},
			"2026-07-02T00:00:00Z", syd, want{errPart: "attribute flag"}},
		{"a zero step is permanent", State{}, Instruction{AttributeCode: "c", Operation: OpIncrement, Step: "0"},
			"2026-07-02T00:00:00Z", syd, want{errPart: "step must be positive"}},
		{"an unknown period is permanent", State{}, Instruction{AttributeCode: "c", Operation: OpIncrement, Period: "HOURLY"},
			"2026-07-02T00:00:00Z", syd, want{errPart: "takes period"}},

		// COMPUTE_GAP
		{"gap between two instants in hours", State{}, Instruction{AttributeCode: "g", Operation: OpComputeGap, From: "2026-07-01T00:00:00Z", Value: "2026-07-03T01:00:00Z", Thresholds: []Threshold{thu("48", "HOURS"), thu("50", "HOURS")}},
			"2026-07-03T02:00:00Z", syd, want{value: "", fired: []string{"48"}}},
		{"gap between two numbers", State{}, Instruction{AttributeCode: "g", Operation: OpComputeGap, From: "10", Value: "17.5", Thresholds: []Threshold{thu("7.5", "MINUTES")}},
			"2026-07-03T02:00:00Z", syd, want{fired: []string{"7.5"}}},
		{"gap from the stored instant to the event time, stored value kept", State{Exists: true, Type: TypeInstant, Instant: at("2026-07-01T00:00:00Z"), LastEventOn: at("2026-07-01T00:00:00Z")}, Instruction{AttributeCode: "g", Operation: OpComputeGap, Thresholds: []Threshold{thu("2", "DAYS")}},
			"2026-07-03T02:00:00Z", ny, want{value: "2026-07-01T00:00:00.000Z", fired: []string{"2"}, lastSeen: "2026-07-03T02:00:00Z"}},
		{"gap of an instant and a number is permanent", State{}, Instruction{AttributeCode: "g", Operation: OpComputeGap, From: "10", Value: "2026-07-03T01:00:00Z", Thresholds: []Threshold{thu("1", "DAYS")}},
			"2026-07-03T02:00:00Z", syd, want{errPart: "two instants or two numbers"}},

		// CHECK_AND_UPDATE_TIMER
		{"timer on null: set, no trigger", State{}, Instruction{AttributeCode: "last_active", Operation: OpCheckAndUpdateTimer, Thresholds: []Threshold{thu("90", "DAYS")}},
			"2026-07-03T02:00:00Z", syd, want{value: "2026-07-03T02:00:00.000Z"}},
		{"timer CALENDAR_DAYS: 90 local dates later fires and restarts", State{Exists: true, Type: TypeInstant, Instant: at("2026-04-01T23:00:00Z"), LastEventOn: at("2026-04-01T23:00:00Z")}, Instruction{AttributeCode: "last_active", Operation: OpCheckAndUpdateTimer, Thresholds: []Threshold{thu("90", "CALENDAR_DAYS")}},
			"2026-06-30T14:30:00Z", syd, want{value: "2026-06-30T14:30:00.000Z", fired: []string{"90"}}},
		{"timer CALENDAR_DAYS: 89 local dates later does not fire", State{Exists: true, Type: TypeInstant, Instant: at("2026-04-01T23:00:00Z"), LastEventOn: at("2026-04-01T23:00:00Z")}, Instruction{AttributeCode: "last_active", Operation: OpCheckAndUpdateTimer, Thresholds: []Threshold{thu("90", "CALENDAR_DAYS")}},
			"2026-06-30T13:30:00Z", syd, want{value: "2026-06-30T13:30:00.000Z"}},
		// DAYS is elapsed time (seed 003: GAP = NOW() - old_date). Local times from
		// shared/tools/tzoracle.py: Ho Chi Minh 2026-04-02 12:00 = 05:00Z, 2026-07-01 11:00 = 04:00Z;
		// Sydney 2026-04-02 10:00 (+11) = 2026-04-01T23:00Z, 2026-07-01 00:30 (+10) = 2026-06-30T14:30Z,
		// 2026-04-02 12:00 (+11) = 01:00Z, 2026-07-01 11:00 (+10) = 01:00Z.
		{"timer DAYS: 89 days 23 hours (12:00 to 11:00 local, 90 dates later) does not fire", State{Exists: true, Type: TypeInstant, Instant: at("2026-04-02T05:00:00Z"), LastEventOn: at("2026-04-02T05:00:00Z")}, Instruction{AttributeCode: "last_active", Operation: OpCheckAndUpdateTimer, Thresholds: []Threshold{thu("90", "DAYS")}},
			"2026-07-01T04:00:00Z", hcm, want{value: "2026-07-01T04:00:00.000Z"}},
		{"timer CALENDAR_DAYS: the same 89 days 23 hours is 90 dates and fires", State{Exists: true, Type: TypeInstant, Instant: at("2026-04-02T05:00:00Z"), LastEventOn: at("2026-04-02T05:00:00Z")}, Instruction{AttributeCode: "last_active", Operation: OpCheckAndUpdateTimer, Thresholds: []Threshold{thu("90", "CALENDAR_DAYS")}},
			"2026-07-01T04:00:00Z", hcm, want{value: "2026-07-01T04:00:00.000Z", fired: []string{"90"}}},
		{"timer DAYS: exactly 90 x 24 hours fires and restarts", State{Exists: true, Type: TypeInstant, Instant: at("2026-04-02T05:00:00Z"), LastEventOn: at("2026-04-02T05:00:00Z")}, Instruction{AttributeCode: "last_active", Operation: OpCheckAndUpdateTimer, Thresholds: []Threshold{thu("90", "DAYS")}},
			"2026-07-01T05:00:00Z", hcm, want{value: "2026-07-01T05:00:00.000Z", fired: []string{"90"}}},
		{"timer DAYS: 90 Sydney dates but 89 days 15.5 hours elapsed does not fire", State{Exists: true, Type: TypeInstant, Instant: at("2026-04-01T23:00:00Z"), LastEventOn: at("2026-04-01T23:00:00Z")}, Instruction{AttributeCode: "last_active", Operation: OpCheckAndUpdateTimer, Thresholds: []Threshold{thu("90", "DAYS")}},
			"2026-06-30T14:30:00Z", syd, want{value: "2026-06-30T14:30:00.000Z"}},
		{"timer DAYS: Sydney 12:00 (+11) to 11:00 (+10) over the DST end is 90 days elapsed and fires", State{Exists: true, Type: TypeInstant, Instant: at("2026-04-02T01:00:00Z"), LastEventOn: at("2026-04-02T01:00:00Z")}, Instruction{AttributeCode: "last_active", Operation: OpCheckAndUpdateTimer, Thresholds: []Threshold{thu("90", "DAYS")}},
			"2026-07-01T01:00:00Z", syd, want{value: "2026-07-01T01:00:00.000Z", fired: []string{"90"}}},
		// New York's 23- and 25-hour days (tzoracle.py: 2026-03-07 12:00 = 17:00Z, 2026-03-08
		// 12:00 = 16:00Z; 2026-10-31 12:00 = 16:00Z, 2026-11-01 12:00 = 17:00Z): noon to noon over
		// the spring-forward day is one calendar day but 23 hours; over the fall-back day 25 hours.
		{"timer over the 23-hour day: 1 CALENDAR_DAYS fires, 1 DAYS does not", State{Exists: true, Type: TypeInstant, Instant: at("2026-03-07T17:00:00Z"), LastEventOn: at("2026-03-07T17:00:00Z")}, Instruction{AttributeCode: "last_active", Operation: OpCheckAndUpdateTimer, Thresholds: []Threshold{thu("1", "DAYS"), thu("1", "CALENDAR_DAYS"), thu("23", "HOURS")}},
			"2026-03-08T16:00:00Z", ny, want{value: "2026-03-08T16:00:00.000Z", fired: []string{"1", "23"}}},
		{"timer over the 25-hour day: 1.04 DAYS fires, 2 CALENDAR_DAYS does not", State{Exists: true, Type: TypeInstant, Instant: at("2026-10-31T16:00:00Z"), LastEventOn: at("2026-10-31T16:00:00Z")}, Instruction{AttributeCode: "last_active", Operation: OpCheckAndUpdateTimer, Thresholds: []Threshold{thu("1.04", "DAYS"), thu("1.05", "DAYS"), thu("2", "CALENDAR_DAYS")}},
			"2026-11-01T17:00:00Z", ny, want{value: "2026-11-01T17:00:00.000Z", fired: []string{"1.04"}}},
		{"gap DAYS keeps fractions: 36 hours is 1.5 days", State{}, Instruction{AttributeCode: "g", Operation: OpComputeGap, From: "2026-07-01T00:00:00Z", Value: "2026-07-02T12:00:00Z", Thresholds: []Threshold{thu("1.5", "DAYS"), thu("1.6", "DAYS"), thu("1", "CALENDAR_DAYS"), thu("2", "CALENDAR_DAYS")}},
			"2026-07-03T02:00:00Z", hcm, want{fired: []string{"1.5", "1"}}},
		{"timer never moves backwards", State{Exists: true, Type: TypeInstant, Instant: at("2026-07-01T00:00:00Z"), LastEventOn: at("2026-07-01T00:00:00Z")}, Instruction{AttributeCode: "last_active", Operation: OpCheckAndUpdateTimer, Thresholds: []Threshold{thu("1", "MINUTES")}},
			"2026-06-01T00:00:00Z", syd, want{value: "2026-07-01T00:00:00.000Z"}},
		{"timer on a list is permanent", State{Exists: true, Type: TypeList}, Instruction{AttributeCode: "recent", Operation: OpCheckAndUpdateTimer},
			"2026-06-01T00:00:00Z", syd, want{errPart: "attribute recent"}},

		// APPEND_UNIQUE
		{"append to nothing", State{}, Instruction{AttributeCode: "recent", Operation: OpAppendUnique, Value: "A", MaxItems: maxItems(3)},
			"2026-07-01T00:00:00Z", syd, want{value: `["A"]`}},
		{"append evicts the oldest beyond max_items", State{Exists: true, Type: TypeList, List: []string{"C", "B", "A"}, LastEventOn: at("2026-07-01T00:00:00Z")}, Instruction{AttributeCode: "recent", Operation: OpAppendUnique, Value: "D", MaxItems: maxItems(3)},
			"2026-07-02T00:00:00Z", syd, want{value: `["D","C","B"]`}},
		{"a re-view moves the item to the front, no duplicate", State{Exists: true, Type: TypeList, List: []string{"C", "B", "A"}, LastEventOn: at("2026-07-01T00:00:00Z")}, Instruction{AttributeCode: "recent", Operation: OpAppendUnique, Value: "A", MaxItems: maxItems(3)},
			"2026-07-02T00:00:00Z", syd, want{value: `["A","C","B"]`}},
		{"an older view changes nothing", State{Exists: true, Type: TypeList, List: []string{"C"}, LastEventOn: at("2026-07-02T00:00:00Z")}, Instruction{AttributeCode: "recent", Operation: OpAppendUnique, Value: "A", MaxItems: maxItems(3)},
			"2026-07-01T00:00:00Z", syd, want{value: `["C"]`}},
		{"append to a number is permanent", numberState("1", "", "", "2026-07-01T00:00:00Z"), Instruction{AttributeCode: "recent", Operation: OpAppendUnique, Value: "A", MaxItems: maxItems(3)},
			"2026-07-01T00:00:00Z", syd, want{errPart: "attribute recent"}},

		// SET_TRUE_ONCE
		{"flag false -> true fires", State{}, Instruction{AttributeCode: "first_login", Operation: OpSetTrueOnce, Thresholds: []Threshold{th("1", "")}},
			"2026-07-01T00:00:00Z", syd, want{value: "true", fired: []string{"1"}}},
		{"flag true -> true does not fire", State{Exists: true, Type: TypeBoolean, Bool: true, LastEventOn: at("2026-07-01T00:00:00Z")}, Instruction{AttributeCode: "first_login", Operation: OpSetTrueOnce, Thresholds: []Threshold{th("1", "")}},
			"2026-07-02T00:00:00Z", syd, want{value: "true"}},

		// STREAK_INCREMENT
		{"streak starts at 1", State{}, Instruction{AttributeCode: "streak", Operation: OpStreakIncrement},
			"2026-07-01T00:00:00Z", syd, want{value: "1", period: "2026-07-01"}},
		{"streak same local day is a no-op", numberState("3", "2026-07-13", dailySyd, "2026-07-12T14:00:00Z"), Instruction{AttributeCode: "streak", Operation: OpStreakIncrement, Thresholds: []Threshold{th("4", "")}},
			"2026-07-13T13:59:00Z", syd, want{value: "3", period: "2026-07-13"}},
		{"streak next local day adds 1 and crosses", numberState("3", "2026-07-12", dailySyd, "2026-07-12T13:59:00Z"), Instruction{AttributeCode: "streak", Operation: OpStreakIncrement, Thresholds: []Threshold{th("4", "")}},
			"2026-07-12T14:00:00Z", syd, want{value: "4", period: "2026-07-13", fired: []string{"4"}}},
		{"streak gap resets to 1", numberState("6", "2026-07-10", dailySyd, "2026-07-10T01:00:00Z"), Instruction{AttributeCode: "streak", Operation: OpStreakIncrement, Thresholds: []Threshold{th("7", "")}},
			"2026-07-12T14:00:00Z", syd, want{value: "1", period: "2026-07-13"}},
		{"streak over the 23-hour DST start day counts it as one day", numberState("1", "2026-10-04", dailySyd, "2026-10-03T14:00:00Z"), Instruction{AttributeCode: "streak", Operation: OpStreakIncrement},
			"2026-10-04T13:00:00Z", syd, want{value: "2", period: "2026-10-05"}},
		{"streak over the 25-hour DST end day", numberState("1", "2026-10-31", dailyNY, "2026-10-31T12:00:00Z"), Instruction{AttributeCode: "streak", Operation: OpStreakIncrement},
			"2026-11-02T04:59:00Z", ny, want{value: "2", period: "2026-11-01"}},
		{"an older login never moves a streak backwards", numberState("5", "2026-07-13", dailySyd, "2026-07-13T00:00:00Z"), Instruction{AttributeCode: "streak", Operation: OpStreakIncrement},
			"2026-07-01T00:00:00Z", syd, want{value: "5", period: "2026-07-13", lastSeen: "2026-07-13T00:00:00Z"}},
		{"streak RESET_ON_TRIGGER", numberState("29", "2026-07-12", dailySyd, "2026-07-12T00:00:00Z"), Instruction{AttributeCode: "streak", Operation: OpStreakIncrement, Thresholds: []Threshold{th("30", ResetOnTrigger)}},
			"2026-07-13T00:00:00Z", syd, want{value: "0", period: "2026-07-13", fired: []string{"30"}}},
		{"weekly streak", numberState("2", "W2026-07-06", streakPrefix+PeriodRule(PeriodWeekly, syd), "2026-07-07T00:00:00Z"), Instruction{AttributeCode: "streak", Operation: OpStreakIncrement, Period: PeriodWeekly},
			"2026-07-12T14:00:00Z", syd, want{value: "3", period: "W2026-07-13"}},
		{"streak on a flag is permanent", State{Exists: true, Type: TypeBoolean}, Instruction{AttributeCode: "streak", Operation: OpStreakIncrement},
			"2026-07-13T00:00:00Z", syd, want{errPart: "attribute streak"}},
		{"unknown operation", State{}, Instruction{AttributeCode: "x", Operation: "MULTIPLY"},
			"2026-07-13T00:00:00Z", syd, want{errPart: "unknown operation"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, cs, err := Apply(c.old, c.in, at(c.at), c.r)
			if c.want.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), c.want.errPart) || !automation.IsInvalid(err) {
					t.Fatalf("err = %v, want a permanent error containing %q", err, c.want.errPart)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := FormatValue(s); got != c.want.value {
				t.Errorf("value = %q, want %q", got, c.want.value)
			}
			if s.Period != c.want.period {
				t.Errorf("period = %q, want %q", s.Period, c.want.period)
			}
			var fired []string
			for _, x := range cs {
				fired = append(fired, x.Value.String())
			}
			if strings.Join(fired, ",") != strings.Join(c.want.fired, ",") {
				t.Errorf("crossings = %v, want %v", fired, c.want.fired)
			}
			if c.want.lastSeen != "" && !s.LastEventOn.Equal(at(c.want.lastSeen)) {
				t.Errorf("LastEventOn = %v, want %s", s.LastEventOn, c.want.lastSeen)
			}
		})
	}
}

// TestApplyEntityCap: UC-02's cap — a streak threshold worth 400 points under a 1,000-point
// calendar-year budget fires twice in a year and is refused the third time (no reset then);
// the next local year (Sydney) opens the budget again.
func TestApplyEntityCap(t *testing.T) {
	syd := zone(t, "Australia/Sydney")
	rules := func(Instruction) (Rules, error) { return syd, nil }
	in := Instruction{AttributeCode: "login_streak", Operation: OpStreakIncrement, Thresholds: []Threshold{{Value: "2", TriggerEvent: "Streak_2",
		ResetPolicy: ResetOnTrigger, Cap: &Cap{Budget: "streak_points", Period: PeriodYearly, Limit: "1000", Cost: "400"}}}}
	states := map[string]State{}
	days := []string{"2026-12-01T00:00:00Z", "2026-12-02T00:00:00Z", "2026-12-03T00:00:00Z", "2026-12-04T00:00:00Z", "2026-12-05T00:00:00Z", "2026-12-06T00:00:00Z",
		"2026-12-31T12:00:00Z", "2026-12-31T13:00:00Z"} // the last is 2027-01-01 00:00 in Sydney (+11)
	fired := applyOnDays(t, states, in, rules, days...)
	// Streak 1,2(fire,reset 0),1,2(fire),1... day 6: 2 again but the cap (800+400 > 1000)
	// refuses: no reset, value stays 2; 31 Dec: gap resets to 1; 1 Jan (new year): 2, fires.
	want := []bool{true, true, false, true}
	if len(fired) != len(want) {
		t.Fatalf("crossings fired = %v, want %v", fired, want)
	}
	for i := range want {
		if fired[i] != want[i] {
			t.Fatalf("crossings fired = %v, want %v", fired, want)
		}
	}
	if c := states[CapPrefix+"streak_points"]; c.Period != "2027" || !c.Number.Equal(num("400")) {
		t.Errorf("cap = %s in %s, want 400 in 2027", c.Number, c.Period)
	}
}

// TestReadAtPeriodRule: last week's weekly count reads 0; a streak reads its value on the
// day after its last counted day and 0 after a missed day.
func TestReadAtPeriodRule(t *testing.T) {
	syd := zone(t, "Australia/Sydney")
	w := numberState("7", "W2026-07-06", PeriodRule(PeriodWeekly, syd), "2026-07-07T00:00:00Z")
	for asOf, want := range map[string]string{"2026-07-12T13:59:00Z": "7", "2026-07-12T14:00:00Z": "0"} {
		s, err := ReadAt(w, at(asOf))
		if err != nil || s.Number.String() != want {
			t.Errorf("weekly read at %s = %s (%v), want %s", asOf, s.Number, err, want)
		}
	}
	st := numberState("5", "2026-07-13", streakPrefix+PeriodRule(PeriodDaily, syd), "2026-07-13T00:00:00Z")
	for asOf, want := range map[string]string{"2026-07-14T13:59:00Z": "5", "2026-07-14T14:00:00Z": "0"} {
		s, err := ReadAt(st, at(asOf))
		if err != nil || s.Number.String() != want {
			t.Errorf("streak read at %s = %s (%v), want %s", asOf, s.Number, err, want)
		}
	}
}
