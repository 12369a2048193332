package attribute

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
)

// ValueType is the kind of value an attribute holds (docs/attributes.md#store).
type ValueType string

// Value types.
const (
	TypeNumber  ValueType = "number"  // an exact decimal
	TypeBoolean ValueType = "boolean" // a flag
	TypeInstant ValueType = "instant" // a UTC instant (a timer)
	TypeList    ValueType = "list"    // a list of distinct strings, most recent first
)

// Operations (docs/attributes.md#operations; the wire names of the fat payload).
const (
	OpIncrement           = "INCREMENT"
	OpDecrement           = "DECREMENT"
	OpComputeGap          = "COMPUTE_GAP"
	OpCheckAndUpdateTimer = "CHECK_AND_UPDATE_TIMER"
	OpAppendUnique        = "APPEND_UNIQUE"
	OpSetTrueOnce         = "SET_TRUE_ONCE"
	OpStreakIncrement     = "STREAK_INCREMENT"
)

// Periods.
const (
	PeriodDaily    = "DAILY"
	PeriodWeekly   = "WEEKLY"
	PeriodMonthly  = "MONTHLY"
	PeriodYearly   = "YEARLY"
	PeriodLifetime = "LIFETIME"
)

// Reset policies.
const (
	ResetNone      = "NONE"
	ResetOnTrigger = "RESET_ON_TRIGGER"
)

// State is one attribute of one entity as stored (an EAV row). The zero State is "no row".
type State struct {
	Exists  bool
	Type    ValueType
	Number  decimal.Decimal // TypeNumber
	Bool    bool            // TypeBoolean
	Instant time.Time       // TypeInstant, UTC
	List    []string        // TypeList, most recent first
	// Period is the calendar period the value belongs to ("2026-07-10", "W2026-07-06",
	// "2026-07", "2026"; "" for LIFETIME and for values without a period). PeriodRule says how
	// it was computed ("WEEKLY MONDAY Australia/Sydney"), so a read can apply the period rule.
	Period     string
	PeriodRule string
	// LastEventOn is the time of the latest event applied (UTC): an older event never moves
	// an order-sensitive attribute (streak, timer, flag, list) backwards.
	LastEventOn time.Time
}

// Threshold is one threshold of an instruction (seed 003, docs/attributes.md#thresholds).
type Threshold struct {
	Value        json.Number `json:"value"`
	Unit         string      `json:"unit,omitempty"` // one of Units (gaps and timers)
	TriggerEvent string      `json:"trigger_event"`
	ResetPolicy  string      `json:"reset_policy,omitempty"`
	Cap          *Cap        `json:"cap,omitempty"`
}

// Cap is a capped budget a threshold's trigger spends (UC-02: at most 1,000 reward points per
// calendar year): the trigger fires only while used + Cost <= Limit in the cap's period, and
// the spend is counted in the same transaction as the attribute.
type Cap struct {
	Budget string      `json:"budget"`
	Period string      `json:"period_type,omitempty"` // default LIFETIME
	Limit  json.Number `json:"limit"`
	Cost   json.Number `json:"cost"`
}

// Instruction is a resolved counter instruction as the fat payload carries it
// (docs/gateway.md#fat-payload): the attribute engine executes it without knowing the event.
type Instruction struct {
	TargetEntityID string      `json:"target_entity_id"`
	EntityType     string      `json:"entity_type"`
	AttributeCode  string      `json:"attribute_code"`
	Operation      string      `json:"operation"`
	Period         string      `json:"period_type,omitempty"`
	Step           json.Number `json:"step,omitempty"`
	Value          string      `json:"value,omitempty"` // APPEND_UNIQUE: the item; COMPUTE_GAP: the "to" operand
	From           string      `json:"from,omitempty"`  // COMPUTE_GAP: the "from" operand ("" = the stored value)
	MaxItems       *int        `json:"max_items,omitempty"`
	Hot            bool        `json:"hot,omitempty"`
	TimeZone       string      `json:"time_zone,omitempty"`  // "" = the business unit's zone
	WeekStart      string      `json:"week_start,omitempty"` // "" = MONDAY
	Thresholds     []Threshold `json:"thresholds,omitempty"`
}

// Crossing is a threshold an operation crossed: Fired false means a cap refused it.
type Crossing struct {
	Threshold Threshold
	Value     decimal.Decimal // the threshold value
	Measured  decimal.Decimal // the attribute value or gap that crossed it
	Fired     bool
}

// Rules are the zone and week start a period is computed in.
type Rules struct {
	Zone      *time.Location
	ZoneID    string
	WeekStart time.Weekday
}

// WeekdayOf parses MONDAY..SUNDAY ("" = Monday). Errors: automation.Invalid on week_start.
func WeekdayOf(s string) (time.Weekday, error) {
	if s == "" {
		return time.Monday, nil
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(d.String(), s) {
			return d, nil
		}
	}
	return 0, automation.Invalid("week_start", "must be a weekday name (MONDAY..SUNDAY), got %q", s)
}

// PeriodKey is the calendar period of instant t under period p in r's zone: "2026-07-10"
// (DAILY), "W2026-07-06" (WEEKLY: the local date its week starts on), "2026-07" (MONTHLY),
// "2026" (YEARLY), "" (LIFETIME or none). The event's own time decides, not the processing time.
func PeriodKey(p string, t time.Time, r Rules) string {
	d := localtime.DateOf(t, r.Zone)
	switch p {
	case PeriodDaily:
		return d.String()
	case PeriodWeekly:
		wd := time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, time.UTC).Weekday()
		back := (int(wd) - int(r.WeekStart) + 7) % 7
		return "W" + d.AddDays(-back).String()
	case PeriodMonthly:
		return fmt.Sprintf("%04d-%02d", d.Year, int(d.Month))
	case PeriodYearly:
		return fmt.Sprintf("%04d", d.Year)
	}
	return ""
}

// PeriodRule is the text stored with a value so that a read can recompute its period.
func PeriodRule(p string, r Rules) string {
	if p == "" || p == PeriodLifetime {
		return ""
	}
	return p + " " + strings.ToUpper(r.WeekStart.String()) + " " + r.ZoneID
}

// streakPrefix marks a streak's period rule ("STREAK_DAILY MONDAY Australia/Sydney"): a
// streak reads differently from a counter (ReadAt).
const streakPrefix = "STREAK_"

// ParsePeriodRule is PeriodRule's inverse (a streak's prefix removed). Errors: an
// unreadable rule or zone.
func ParsePeriodRule(s string) (string, Rules, error) {
	if s == "" {
		return "", Rules{}, nil
	}
	s = strings.TrimPrefix(s, streakPrefix)
	parts := strings.SplitN(s, " ", 3)
	if len(parts) != 3 {
		return "", Rules{}, fmt.Errorf("period rule %q: want \"PERIOD WEEKDAY ZONE\"", s)
	}
	wd, err := WeekdayOf(parts[1])
	if err != nil {
		return "", Rules{}, err
	}
	loc, err := localtime.LoadZone(parts[2])
	if err != nil {
		return "", Rules{}, fmt.Errorf("period rule %q: %w", s, err)
	}
	return parts[0], Rules{Zone: loc, ZoneID: parts[2], WeekStart: wd}, nil
}

// nextPeriod is the period right after key under p (for streaks: DAILY and WEEKLY).
func nextPeriod(p, key string) string {
	switch p {
	case PeriodDaily:
		d, err := localtime.ParseDate(key)
		if err != nil {
			return ""
		}
		return d.AddDays(1).String()
	case PeriodWeekly:
		d, err := localtime.ParseDate(strings.TrimPrefix(key, "W"))
		if err != nil {
			return ""
		}
		return "W" + d.AddDays(7).String()
	}
	return ""
}

// ReadAt is the value a reader sees at asOf (seed 003's isSamePeriod rule): a counter whose
// period is not asOf's period reads 0 (last week's weekly count is 0 this week); a streak
// whose last counted period is neither asOf's nor the one before reads 0 (it is broken).
// Other values read as stored. Errors: the stored period rule cannot be read.
func ReadAt(s State, asOf time.Time) (State, error) {
	if !s.Exists || s.PeriodRule == "" || s.Type != TypeNumber {
		return s, nil
	}
	p, r, err := ParsePeriodRule(s.PeriodRule)
	if err != nil {
		return s, err
	}
	cur := PeriodKey(p, asOf, r)
	if s.Period == cur {
		return s, nil
	}
	if strings.HasPrefix(s.PeriodRule, streakPrefix) && nextPeriod(p, s.Period) == cur {
		return s, nil
	}
	s.Number = decimal.Zero
	return s, nil
}

// permanent is the error of an instruction that cannot apply to the stored value: it names
// the attribute (docs/attributes.md#bad-input).
func permanent(code, format string, args ...any) error {
	return automation.Invalid("attribute "+code, format, args...)
}

func parseDecimal(code, what string, n json.Number) (decimal.Decimal, error) {
	if n == "" {
		return decimal.Decimal{}, permanent(code, "%s is missing", what)
	}
	d, err := decimal.NewFromString(string(n))
	if err != nil || strings.ContainsAny(string(n), "eE") {
		return decimal.Decimal{}, permanent(code, "%s %q is not an exact decimal", what, string(n))
	}
	return d, nil
}

// want checks that the stored value (if any) has type t.
func want(old State, in Instruction, t ValueType) error {
	if old.Exists && old.Type != t {
		return permanent(in.AttributeCode, "%s needs a %s value, but the stored value is a %s", in.Operation, t, old.Type)
	}
	return nil
}

// Apply is one operation, pure: (old state, instruction, event time, rules) -> (new state,
// crossings). Crossings are returned with Fired true; caps are the caller's (ApplyEntity).
// Reset policies are applied here for crossings (RESET_ON_TRIGGER sets the counter to 0 after
// its crossing); ApplyEntity undoes the reset of a crossing a cap refused. Errors: a permanent
// automation.Invalid naming the attribute when the operation does not fit the stored type or
// the instruction is malformed (an unknown operation or period, a non-positive step).
func Apply(old State, in Instruction, at time.Time, r Rules) (State, []Crossing, error) {
	s, cs, err := apply(old, in, at, r)
	if err != nil {
		return old, nil, err
	}
	return resetAfter(s, cs), cs, nil
}

// apply is Apply without the reset policy (ApplyEntity decides caps first).
func apply(old State, in Instruction, at time.Time, r Rules) (State, []Crossing, error) {
	at = at.UTC()
	switch in.Operation {
	case OpIncrement, OpDecrement:
		return applyCounter(old, in, at, r)
	case OpComputeGap:
		return applyGap(old, in, at, r)
	case OpCheckAndUpdateTimer:
		return applyTimer(old, in, at, r)
	case OpAppendUnique:
		return applyAppend(old, in, at)
	case OpSetTrueOnce:
		return applySetTrue(old, in, at)
	case OpStreakIncrement:
		return applyStreak(old, in, at, r)
	}
	return old, nil, permanent(in.AttributeCode, "unknown operation %q", in.Operation)
}

func laterEvent(s *State, at time.Time) {
	if at.After(s.LastEventOn) {
		s.LastEventOn = at
	}
}

func checkPeriod(in Instruction, allowed ...string) (string, error) {
	p := in.Period
	if p == "" {
		p = allowed[0]
	}
	if !slices.Contains(allowed, p) {
		return "", permanent(in.AttributeCode, "%s takes period %s, not %q", in.Operation, strings.Join(allowed, ", "), in.Period)
	}
	return p, nil
}

// applyCounter: INCREMENT/DECREMENT by step with lazy reset. A value of an older period
// counts as 0; an event of a period older than the stored one counts nowhere (the current
// period is left alone). Rising crossings (INCREMENT) are old < t <= new; falling ones
// (DECREMENT) are old > t >= new.
func applyCounter(old State, in Instruction, at time.Time, r Rules) (State, []Crossing, error) {
	if err := want(old, in, TypeNumber); err != nil {
		return old, nil, err
	}
	p, err := checkPeriod(in, PeriodLifetime, PeriodDaily, PeriodWeekly, PeriodMonthly, PeriodYearly)
	if err != nil {
		return old, nil, err
	}
	step := decimal.NewFromInt(1)
	if in.Step != "" {
		if step, err = parseDecimal(in.AttributeCode, "step", in.Step); err != nil {
			return old, nil, err
		}
	}
	if !step.IsPositive() {
		return old, nil, permanent(in.AttributeCode, "step must be positive, got %s", in.Step)
	}
	key, rule := PeriodKey(p, at, r), PeriodRule(p, r)
	cur := decimal.Zero
	if old.Exists && old.PeriodRule != rule {
		old.Period = "" // the period rule changed (registry edit): the old value is another period's
	}
	if old.Exists && old.Period == key {
		cur = old.Number
	} else if old.Exists && key != "" && old.Period != "" && periodBefore(key, old.Period) {
		s := old
		laterEvent(&s, at)
		return s, nil, nil // a late event of a closed period
	}
	next := cur.Add(step)
	if in.Operation == OpDecrement {
		next = cur.Sub(step)
	}
	s := State{Exists: true, Type: TypeNumber, Number: next, Period: key, PeriodRule: PeriodRule(p, r), LastEventOn: old.LastEventOn}
	laterEvent(&s, at)
	cs, err := crossed(in, func(_ Threshold, tv decimal.Decimal) (decimal.Decimal, bool, error) {
		rising := in.Operation == OpIncrement && cur.LessThan(tv) && tv.LessThanOrEqual(next)
		falling := in.Operation == OpDecrement && cur.GreaterThan(tv) && tv.GreaterThanOrEqual(next)
		return next, rising || falling, nil
	})
	if err != nil {
		return old, nil, err
	}
	return s, cs, nil
}

// crossed parses each threshold of in (a permanent error naming the attribute when one is
// not an exact decimal) and returns a fired Crossing, in the thresholds' order, for each
// one measure says fires; measure returns the value the threshold tv is compared with
// (Crossing.Measured) and whether it fires. The first error, of a threshold or of measure,
// is returned with no crossings.
func crossed(in Instruction, measure func(t Threshold, tv decimal.Decimal) (decimal.Decimal, bool, error)) ([]Crossing, error) {
	var cs []Crossing
	for _, t := range in.Thresholds {
		tv, err := parseDecimal(in.AttributeCode, "threshold", t.Value)
		if err != nil {
			return nil, err
		}
		measured, fires, err := measure(t, tv)
		if err != nil {
			return nil, err
		}
		if fires {
			cs = append(cs, Crossing{Threshold: t, Value: tv, Measured: measured, Fired: true})
		}
	}
	return cs, nil
}

// periodBefore compares two period keys of the same rule: they sort as text.
func periodBefore(a, b string) bool { return a < b }

// resetAfter applies RESET_ON_TRIGGER: after a crossing that resets, the counter is 0 (the
// list empty), in the same period.
func resetAfter(s State, cs []Crossing) State {
	for _, c := range cs {
		if c.Fired && c.Threshold.ResetPolicy == ResetOnTrigger {
			s.Number = decimal.Zero
			s.List = nil
		}
	}
	return s
}

// Units of a gap or timer threshold (docs/attributes.md#operations).
const (
	UnitMinutes = "MINUTES"
	UnitHours   = "HOURS"
	// UnitDays is elapsed days: (b - a) / 24 h, fractions kept. Seed 003 defines the gap as
	// GAP = NOW() - old_date in the instruction's unit, "to quantify precisely": a login at
	// 12:00 and the next one 89 days 23 hours later is a gap of 89.96 days, not 90.
	UnitDays = "DAYS"
	// UnitCalendarDays counts calendar days between the two local dates in the rules' zone
	// (a 23-hour DST day is one day; 23:59 and 00:01 the next day are one day apart). Our
	// addition to the seed, for rules stated in dates ("the 90th day after").
	UnitCalendarDays = "CALENDAR_DAYS"
)

// Units lists the units a gap or timer threshold may name.
var Units = []string{UnitMinutes, UnitHours, UnitDays, UnitCalendarDays}

// gapIn is b - a in unit: MINUTES, HOURS and DAYS elapsed (fractions kept, millisecond
// precision), CALENDAR_DAYS as whole calendar days between the local dates in r's zone.
func gapIn(a, b time.Time, unit string, r Rules) decimal.Decimal {
	ms := decimal.NewFromInt(b.Sub(a).Milliseconds())
	switch unit {
	case UnitCalendarDays:
		da, db := localtime.DateOf(a, r.Zone), localtime.DateOf(b, r.Zone)
		ta := time.Date(da.Year, da.Month, da.Day, 0, 0, 0, 0, time.UTC)
		tb := time.Date(db.Year, db.Month, db.Day, 0, 0, 0, 0, time.UTC)
		return decimal.NewFromInt(int64(tb.Sub(ta) / (24 * time.Hour)))
	case UnitDays:
		return ms.Div(decimal.NewFromInt(86_400_000))
	case UnitHours:
		return ms.Div(decimal.NewFromInt(3_600_000))
	default:
		return ms.Div(decimal.NewFromInt(60_000))
	}
}

// applyGap: COMPUTE_GAP between two instants (RFC 3339) or two numbers: from = in.From, else
// the stored value; to = in.Value, else the event time. Every threshold t <= gap fires; the
// stored value is not changed (only LastEventOn). A stored value of another type, or operands
// of two kinds, is a permanent error; no "from" at all measures nothing.
func applyGap(old State, in Instruction, at time.Time, r Rules) (State, []Crossing, error) {
	from, to := in.From, in.Value
	if from == "" && old.Exists {
		switch old.Type {
		case TypeInstant:
			from = old.Instant.Format(time.RFC3339Nano)
		case TypeNumber:
			from = old.Number.String()
		default:
			return old, nil, permanent(in.AttributeCode, "COMPUTE_GAP measures from an instant or a number, but the stored value is a %s", old.Type)
		}
	}
	if from == "" {
		return old, nil, nil
	}
	if to == "" {
		to = at.Format(time.RFC3339Nano)
	}
	ta, errA := time.Parse(time.RFC3339Nano, from)
	tb, errB := time.Parse(time.RFC3339Nano, to)
	na, errNA := decimal.NewFromString(from)
	nb, errNB := decimal.NewFromString(to)
	cs, err := crossed(in, func(t Threshold, tv decimal.Decimal) (decimal.Decimal, bool, error) {
		var gap decimal.Decimal
		switch {
		case errA == nil && errB == nil:
			gap = gapIn(ta, tb, t.Unit, r)
		case errNA == nil && errNB == nil:
			gap = nb.Sub(na)
		default:
			return gap, false, permanent(in.AttributeCode, "COMPUTE_GAP needs two instants or two numbers, got %q and %q", from, to)
		}
		return gap, tv.LessThanOrEqual(gap), nil
	})
	if err != nil {
		return old, nil, err
	}
	s := old
	if s.Exists {
		laterEvent(&s, at)
	}
	return s, cs, nil
}

// applyTimer: CHECK_AND_UPDATE_TIMER. No stored instant: set it to the event time, no
// trigger (seed 003's null rule). Otherwise every threshold t <= the gap (in its unit) from
// the stored instant to the event time fires, then the timer is set to the event time. An
// event older than the timer changes nothing.
func applyTimer(old State, in Instruction, at time.Time, r Rules) (State, []Crossing, error) {
	if err := want(old, in, TypeInstant); err != nil {
		return old, nil, err
	}
	s := State{Exists: true, Type: TypeInstant, Instant: at, LastEventOn: old.LastEventOn}
	laterEvent(&s, at)
	if !old.Exists {
		return s, nil, nil
	}
	if !at.After(old.Instant) {
		s = old
		return s, nil, nil
	}
	cs, err := crossed(in, func(t Threshold, tv decimal.Decimal) (decimal.Decimal, bool, error) {
		gap := gapIn(old.Instant, at, t.Unit, r)
		return gap, tv.LessThanOrEqual(gap), nil
	})
	if err != nil {
		return old, nil, err
	}
	return s, cs, nil
}

// applyAppend: APPEND_UNIQUE puts the value at the front (most recent first); a value already
// in the list moves to the front (a re-view is recent again); beyond max_items the oldest go
// (first in, first out). An event older than the last applied one changes nothing.
func applyAppend(old State, in Instruction, at time.Time) (State, []Crossing, error) {
	if err := want(old, in, TypeList); err != nil {
		return old, nil, err
	}
	if in.Value == "" {
		return old, nil, permanent(in.AttributeCode, "APPEND_UNIQUE needs a value")
	}
	if in.MaxItems == nil || *in.MaxItems <= 0 {
		return old, nil, permanent(in.AttributeCode, "APPEND_UNIQUE needs a positive max_items")
	}
	if old.Exists && at.Before(old.LastEventOn) {
		return old, nil, nil
	}
	list := make([]string, 0, len(old.List)+1)
	list = append(list, in.Value)
	for _, v := range old.List {
		if v != in.Value {
			list = append(list, v)
		}
	}
	if len(list) > *in.MaxItems {
		list = list[:*in.MaxItems]
	}
	s := State{Exists: true, Type: TypeList, List: list, LastEventOn: old.LastEventOn}
	laterEvent(&s, at)
	return s, nil, nil
}

// applySetTrueOnce: the flag becomes true; its thresholds (value 1) fire only on false -> true.
func applySetTrue(old State, in Instruction, at time.Time) (State, []Crossing, error) {
	if err := want(old, in, TypeBoolean); err != nil {
		return old, nil, err
	}
	s := State{Exists: true, Type: TypeBoolean, Bool: true, LastEventOn: old.LastEventOn}
	laterEvent(&s, at)
	if old.Exists && old.Bool {
		return s, nil, nil
	}
	var cs []Crossing
	for _, t := range in.Thresholds {
		cs = append(cs, Crossing{Threshold: t, Value: decimal.NewFromInt(1), Measured: decimal.NewFromInt(1), Fired: true})
	}
	return s, cs, nil
}

// applyStreak: STREAK_INCREMENT by calendar period (DAILY or WEEKLY) in the zone: the same
// period is a no-op, the next adds 1, a later one resets to 1; an event of an earlier period
// changes nothing. Crossings are old < t <= new.
func applyStreak(old State, in Instruction, at time.Time, r Rules) (State, []Crossing, error) {
	if err := want(old, in, TypeNumber); err != nil {
		return old, nil, err
	}
	p, err := checkPeriod(in, PeriodDaily, PeriodWeekly)
	if err != nil {
		return old, nil, err
	}
	key := PeriodKey(p, at, r)
	cur := decimal.Zero
	next := decimal.NewFromInt(1)
	if old.Exists && old.PeriodRule == streakPrefix+PeriodRule(p, r) {
		switch {
		case key == old.Period || periodBefore(key, old.Period):
			s := old
			laterEvent(&s, at)
			return s, nil, nil
		case key == nextPeriod(p, old.Period):
			cur = old.Number
			next = cur.Add(decimal.NewFromInt(1))
		}
	}
	s := State{Exists: true, Type: TypeNumber, Number: next, Period: key, PeriodRule: streakPrefix + PeriodRule(p, r), LastEventOn: old.LastEventOn}
	laterEvent(&s, at)
	cs, err := crossed(in, func(_ Threshold, tv decimal.Decimal) (decimal.Decimal, bool, error) {
		return next, cur.LessThan(tv) && tv.LessThanOrEqual(next), nil
	})
	if err != nil {
		return old, nil, err
	}
	return s, cs, nil
}

// FormatValue is the stored text of a value: a decimal, "true"/"false", an RFC 3339 UTC
// instant (milliseconds), a JSON array of strings.
func FormatValue(s State) string {
	switch s.Type {
	case TypeNumber:
		return s.Number.String()
	case TypeBoolean:
		return strconv.FormatBool(s.Bool)
	case TypeInstant:
		return s.Instant.UTC().Format("2006-01-02T15:04:05.000Z")
	case TypeList:
		b, _ := json.Marshal(append([]string{}, s.List...))
		return string(b)
	}
	return ""
}

// ParseValue reads FormatValue's text back. Errors: text that does not fit the type.
func ParseValue(t ValueType, text string) (State, error) {
	s := State{Exists: true, Type: t}
	var err error
	switch t {
	case TypeNumber:
		s.Number, err = decimal.NewFromString(text)
	case TypeBoolean:
		s.Bool, err = strconv.ParseBool(text)
	case TypeInstant:
		s.Instant, err = time.Parse(time.RFC3339Nano, text)
		s.Instant = s.Instant.UTC()
	case TypeList:
		err = json.Unmarshal([]byte(text), &s.List)
	default:
		err = fmt.Errorf("unknown value type %q", t)
	}
	if err != nil {
		return State{}, fmt.Errorf("stored %s value %q: %w", t, text, err)
	}
	return s, nil
}
