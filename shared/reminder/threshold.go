package reminder

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
)

// FiringPolicy says how often a reached threshold fires; it is part of the SchedulerKey
// (docs/architecture.md#threshold-reminders):
//
//	policy            thresholdValue / scopeKey    fires
//	OncePerThreshold  level / src                  once per level per source
//	OncePerSource     any / src                    once per source, at the first level reached
//	OncePerDay        level / d{localDate}         at most once per BU-local day while reached
//	FalseToTrue       level / e{n}                 on every false→true crossing (n-th rising edge)
type FiringPolicy string

// Firing policies.
const (
	OncePerThreshold FiringPolicy = "OncePerThreshold"
	OncePerSource    FiringPolicy = "OncePerSource"
	OncePerDay       FiringPolicy = "OncePerDay"
	FalseToTrue      FiringPolicy = "FalseToTrue"
)

// MaxThresholdLevels bounds the levels of one setting.
const MaxThresholdLevels = 10

// ThresholdConfig is the threshold part of a ThresholdCondition setting.
type ThresholdConfig struct {
	// Metric says how the measured value is computed from the source's data.
	Metric *Metric `json:"metric"`
	// Levels are the thresholds in the metric's unit (e.g. [80, 90, 100] percent); a level
	// is reached when the metric is >= the level. Distinct, at most MaxThresholdLevels.
	Levels       []json.Number `json:"levels"`
	FiringPolicy FiringPolicy  `json:"firingPolicy"`
	// SendWindow, when set, is the local window (in the business unit's zone) in which a
	// reached threshold is sent; outside it (quiet hours) the row waits for the window's
	// next start (DST product rule for that local time).
	SendWindow *SendWindow `json:"sendWindow,omitempty"`
}

// Metric is a number computed from the source entity's current fields (its aggregate).
type Metric struct {
	// Key names the metric in the SchedulerKey ({metricKey}), e.g. "bookedPercent".
	Key string `json:"key"`
	// Field is the data field holding the measured number, e.g. "booked".
	Field string `json:"field"`
	// Of, when set, is the data field holding the whole: the metric is then the percentage
	// 100 × Field / Of (e.g. booked of capacity). A whole of zero or less has no metric.
	Of string `json:"of,omitempty"`
}

// SendWindow is a local time window [Start, End); Start after End spans midnight
// (22:00–06:00).
type SendWindow struct {
	Start *localtime.TimeOfDay `json:"start"`
	End   *localtime.TimeOfDay `json:"end"`
}

func (c *ThresholdConfig) validate(prefix string) []error {
	var errs []error
	bad := func(field, f string, a ...any) { errs = append(errs, automation.Invalid(prefix+"."+field, f, a...)) }
	if c.Metric == nil {
		bad("metric", "is required: {\"key\", \"field\"[, \"of\"]}")
	} else {
		if !tokenRE.MatchString(c.Metric.Key) {
			bad("metric.key", "is required (the metric's name in the key, letters, digits, ._~@+/-)")
		}
		if !tokenRE.MatchString(c.Metric.Field) {
			bad("metric.field", "is required (the data field holding the measured number)")
		}
		if c.Metric.Of != "" && !tokenRE.MatchString(c.Metric.Of) {
			bad("metric.of", "must be a data field name")
		}
	}
	if len(c.Levels) == 0 {
		bad("levels", "needs at least one level")
	}
	if len(c.Levels) > MaxThresholdLevels {
		bad("levels", "has %d levels, at most %d", len(c.Levels), MaxThresholdLevels)
	}
	seen := map[string]bool{}
	for i, l := range c.Levels {
		text, err := levelText(l)
		if err != nil {
			bad(fmt.Sprintf("levels[%d]", i), "%v", err)
			continue
		}
		if seen[text] {
			bad(fmt.Sprintf("levels[%d]", i), "duplicate level %s", text)
		}
		seen[text] = true
	}
	switch c.FiringPolicy {
	case OncePerThreshold, OncePerSource, OncePerDay, FalseToTrue:
	default:
		bad("firingPolicy", "must be %s, %s, %s or %s, got %q", OncePerThreshold, OncePerSource, OncePerDay, FalseToTrue, c.FiringPolicy)
	}
	if w := c.SendWindow; w != nil {
		if w.Start == nil || w.End == nil {
			bad("sendWindow", "needs start and end (\"HH:MM\", local to the business unit)")
		} else if *w.Start == *w.End {
			bad("sendWindow", "start and end are equal; omit sendWindow to send at any time")
		}
	}
	return errs
}

// MaxLevelChars bounds the canonical text of a threshold level: it is a SchedulerKey
// component and the ThresholdLevel column (nvarchar(50)) of the edge state.
const MaxLevelChars = 24

// levelText is the canonical text of a level: the shortest decimal that round-trips, no
// trailing zeros ("0.9", "100"), as the SchedulerKey writes numbers (docs/architecture.md#scheduler-keys). A level outside
// ±1e15 is an error.
func levelText(n json.Number) (string, error) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != f || f > 1e15 || f < -1e15 {
		return "", fmt.Errorf("must be a finite number, got %s", string(n))
	}
	return strconv.FormatFloat(f, 'f', -1, 64), nil
}

// checkLevelWrite is the check of a level being written: its canonical text is at most
// MaxLevelChars ("1e-300" is not) and exactly the number given (more than 15 significant
// digits would be compared as another number).
func checkLevelWrite(n json.Number) error {
	text, err := levelText(n)
	if err != nil {
		return err
	}
	if len(text) > MaxLevelChars {
		return fmt.Errorf("must be a number written in at most %d characters as a decimal (e.g. 87.5), got %s", MaxLevelChars, string(n))
	}
	given, ok1 := new(big.Rat).SetString(string(n))
	canon, ok2 := new(big.Rat).SetString(text)
	if !ok1 || !ok2 || given.Cmp(canon) != 0 {
		return fmt.Errorf("must be exact in at most 15 significant digits, got %s (it would be compared as %s)", string(n), text)
	}
	return nil
}

// level is one configured level.
type level struct {
	text  string
	value *big.Rat
	f     float64
}

func (c *ThresholdConfig) levels() []level {
	out := make([]level, 0, len(c.Levels))
	for _, l := range c.Levels {
		text, err := levelText(l)
		if err != nil {
			continue // Validate rejects it
		}
		r, _ := new(big.Rat).SetString(text)
		f, _ := strconv.ParseFloat(text, 64)
		out = append(out, level{text: text, value: r, f: f})
	}
	return out
}

// thresholdEval is the metric of one source under one setting: the value (nil when the
// data has no metric) and, per configured level, whether it is reached.
type thresholdEval struct {
	value   *big.Rat
	levels  []level
	reached []bool
}

func (e thresholdEval) anyReached() bool {
	for _, r := range e.reached {
		if r {
			return true
		}
	}
	return false
}

// highest returns the text of the highest level reached ("" when none).
func (e thresholdEval) highest() string {
	best := -1
	for i, r := range e.reached {
		if r && (best < 0 || e.levels[i].value.Cmp(e.levels[best].value) > 0) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return e.levels[best].text
}

// evalThreshold computes the metric of set from data with exact decimal arithmetic (no
// floating-point rounding at the boundary: 9 of 10 is exactly 90 %). A field that is absent
// or null means no metric (nothing reached); a field that is not a number, or a number
// outside ±1e15, nearer to 0 than 1e-15 or longer than 64 characters, is bad input
// (automation.Invalid naming "data.<field>").
func evalThreshold(set Setting, data map[string]any) (thresholdEval, error) {
	c := set.Threshold
	ev := thresholdEval{levels: c.levels()}
	ev.reached = make([]bool, len(ev.levels))
	num, ok, err := dataNumber(c.Metric.Field, data)
	if err != nil || !ok {
		return ev, err
	}
	v := num
	if c.Metric.Of != "" {
		whole, ok, err := dataNumber(c.Metric.Of, data)
		if err != nil || !ok {
			return ev, err
		}
		if whole.Sign() <= 0 {
			return ev, nil
		}
		v = new(big.Rat).Quo(new(big.Rat).Mul(num, big.NewRat(100, 1)), whole)
	}
	ev.value = v
	for i, l := range ev.levels {
		ev.reached[i] = v.Cmp(l.value) >= 0
	}
	return ev, nil
}

func dataNumber(field string, data map[string]any) (*big.Rat, bool, error) {
	v, present := data[field]
	if !present || v == nil {
		return nil, false, nil
	}
	var text string
	switch t := v.(type) {
	case json.Number:
		text = t.String()
	case float64:
		text = strconv.FormatFloat(t, 'g', -1, 64)
	case int:
		text = strconv.Itoa(t)
	case int64:
		text = strconv.FormatInt(t, 10)
	default:
		return nil, false, automation.Invalid("data."+field, "must be a number, got %s", jsonText(v))
	}
	bad := func() (*big.Rat, bool, error) {
		if len(text) > 40 {
			text = text[:40] + "…"
		}
		return nil, false, automation.Invalid("data."+field, "must be a number within ±1e15, 0 or at least 1e-15 away from it, in at most %d characters; got %s",
			maxMetricChars, text)
	}
	// Bounds first, cheaply: a million-digit exponent must not reach big.Rat.
	f, err := strconv.ParseFloat(text, 64)
	if len(text) > maxMetricChars || err != nil || math.IsNaN(f) || math.Abs(f) > 1e15 || (f != 0 && math.Abs(f) < 1e-15) {
		return bad()
	}
	if f == 0 && strings.Trim(strings.FieldsFunc(text, func(r rune) bool { return r == 'e' || r == 'E' })[0], "+-0.") != "" {
		return bad() // a non-zero number that underflows to 0 (1e-999999)
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return bad()
	}
	return r, true, nil
}

// maxMetricChars bounds the text of a metric field's number.
const maxMetricChars = 64

// metricText formats a metric value for payloads: up to 4 decimals, no trailing zeros.
func metricText(v *big.Rat) string {
	if v == nil {
		return ""
	}
	s := v.FloatString(4)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// thresholdHashV1 is the canonical input of a threshold firing: exactly the key's
// components, so one key always has one InputHash (an edit of the metric's field under the
// same metric key keeps the rows, and revalidation reads the new field at due time).
type thresholdHashV1 struct {
	V              int    `json:"v"`
	AutomationType string `json:"automationType"`
	TriggerType    string `json:"triggerType"`
	hashSubjectV1
	ThresholdKey string `json:"thresholdKey"`
}

// thresholdKeyFor builds {metricKey}:{thresholdValue}:{firingPolicy}:{scopeKey}; lvl nil
// means the value "any" (OncePerSource).
func thresholdKeyFor(set Setting, lvl *level, scope string) (string, error) {
	c := set.Threshold
	if lvl == nil {
		return automation.ThresholdKeyAny(c.Metric.Key, string(c.FiringPolicy), scope)
	}
	return automation.ThresholdKey(c.Metric.Key, lvl.f, string(c.FiringPolicy), scope)
}

// thresholdHash is the InputHash of a threshold firing under threshold key tk
// (thresholdHashV1).
func thresholdHash(set Setting, src Source, z Zone, tk string) string {
	return automation.InputHash(thresholdHashV1{V: 1, AutomationType: string(automation.TypeReminder), TriggerType: string(automation.TriggerThresholdCondition),
		hashSubjectV1: hashSubject(set, src, z), ThresholdKey: tk})
}

func thresholdCandidate(set Setting, src Source, z Zone, lvl *level, scope string, due time.Time) (automation.Candidate, error) {
	tk, err := thresholdKeyFor(set, lvl, scope)
	if err != nil {
		return automation.Candidate{}, automation.Invalid("threshold", "%v", err)
	}
	key, err := automation.ReminderThresholdKey(set.Guid, src.EntityType, src.EntityGuid, set.TriggerKey, tk)
	if err != nil {
		return automation.Candidate{}, automation.Invalid("entityguid", "%v", err)
	}
	hash := thresholdHash(set, src, z, tk)
	local := due.In(z.Loc)
	return automation.Candidate{
		AutomationType: automation.TypeReminder, TriggerType: automation.TriggerThresholdCondition,
		SchedulerKey: key, InputHash: hash, SettingGuid: set.Guid,
		SourceEntityType: src.EntityType, SourceEntityGuid: src.EntityGuid, BusinessUnitID: z.BusinessUnitID,
		ScheduledOn: due.UTC(), ScheduledLocalDate: localtime.DateOf(due, z.Loc).String(), ScheduledLocalTime: local.Format("15:04"), TimeZoneID: z.TimeZoneID,
	}, nil
}

// keyPrefix is the key of (setting, source, level) without its scope, so a row can be
// matched to the level it fired for whatever its day or edge.
func keyPrefix(set Setting, src Source, z Zone, lvl *level) string {
	c, err := thresholdCandidate(set, src, z, lvl, "~", time.Unix(0, 0))
	if err != nil || !strings.HasSuffix(c.SchedulerKey, "~") {
		return "\x00" // never matches (an over-long key was shortened)
	}
	return strings.TrimSuffix(c.SchedulerKey, "~")
}

// EdgeApplier records the condition of one level at the source's revision and returns the
// number of rising edges counted so far (store.LifecycleStore.ThresholdEdgeApply); 0 means
// no edge to fire for.
type EdgeApplier func(ctx context.Context, level string, met bool) (edges int64, err error)

// thresholdDue is when a threshold reached at now is sent: now (to the minute), or, outside
// the setting's send window, the window's next start.
func thresholdDue(set Setting, z Zone, now time.Time) time.Time {
	due := now.UTC().Truncate(time.Minute)
	if w := set.Threshold.SendWindow; w != nil && w.Start != nil && w.End != nil {
		due = nextInWindow(due, z.Loc, *w.Start, *w.End)
	}
	return due
}

// nextInWindow returns t when its local wall time is inside [start, end) (spanning midnight
// when start > end), else the next local start, resolved with the DST product rule
// (localtime.Resolve: a start inside a spring-forward gap moves forward by the gap).
func nextInWindow(t time.Time, loc *time.Location, start, end localtime.TimeOfDay) time.Time {
	local := t.In(loc)
	m := local.Hour()*60 + local.Minute()
	s, e := start.Hour*60+start.Minute, end.Hour*60+end.Minute
	inside := (s < e && m >= s && m < e) || (s > e && (m >= s || m < e))
	if inside {
		return t
	}
	day := localtime.DateOf(t, loc)
	if m >= s {
		day = day.AddDays(1)
	}
	next := localtime.Resolve(loc, day, start)
	if !next.After(t) {
		return t // a fall-back overlap put the window's start behind us: it has begun
	}
	return next
}

// thresholdCandidates returns the rows a ThresholdCondition setting wants for src at now
// (docs/architecture.md#threshold-reminders). edges records rising edges (FalseToTrue only; nil outside event processing means
// "read only"). existing holds this source's rows by key: a firing whose row is already
// Pending and due (ScheduledOn <= now) keeps that row's schedule, so a stream of events
// cannot keep pushing it back. A Pending row still waiting for its send window is re-timed
// from now: under an unchanged window and zone that is the same instant, and after a send
// window or business-unit time-zone change it is the new window's next start (docs/architecture.md#settings-changes, update
// in place).
func thresholdCandidates(ctx context.Context, set Setting, src Source, z Zone, ev thresholdEval, now time.Time,
	edges EdgeApplier, existing map[string]automation.SchedulerRow) ([]automation.Candidate, error) {
	due := thresholdDue(set, z, now)
	var out []automation.Candidate
	add := func(lvl *level, scope string) error {
		c, err := thresholdCandidate(set, src, z, lvl, scope, due)
		if err != nil {
			return err
		}
		if r, ok := existing[c.SchedulerKey]; ok && r.Status == automation.StatusPending && !r.ScheduledOn.After(now) {
			c.ScheduledOn, c.ScheduledLocalDate, c.ScheduledLocalTime, c.TimeZoneID = r.ScheduledOn, r.ScheduledLocalDate, r.ScheduledLocalTime, r.TimeZoneID
		}
		out = append(out, c)
		return nil
	}
	switch set.Threshold.FiringPolicy {
	case OncePerSource:
		if ev.anyReached() {
			return out, add(nil, "src")
		}
	case FalseToTrue:
		for i := range ev.levels {
			if edges == nil {
				return nil, fmt.Errorf("reminder: FalseToTrue needs edge state")
			}
			n, err := edges(ctx, ev.levels[i].text, ev.reached[i])
			if err != nil {
				return nil, err
			}
			if ev.reached[i] && n > 0 {
				if err := add(&ev.levels[i], "e"+strconv.FormatInt(n, 10)); err != nil {
					return nil, err
				}
			}
		}
	default: // OncePerThreshold, OncePerDay
		for i := range ev.levels {
			if !ev.reached[i] {
				continue
			}
			scope := "src"
			if set.Threshold.FiringPolicy == OncePerDay {
				scope = "d" + localtime.DateOf(due, z.Loc).String()
			}
			if err := add(&ev.levels[i], scope); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// thresholdRowReason explains why a row of a threshold setting is not wanted any more: its
// level is configured but no longer reached → ConditionNoLongerMet; anything else (a level
// edited away, an older day or edge while the level is still reached) → Superseded.
func thresholdRowReason(set Setting, src Source, z Zone, ev thresholdEval, row automation.SchedulerRow) automation.ReasonCode {
	if set.Threshold.FiringPolicy == OncePerSource {
		if strings.HasPrefix(row.SchedulerKey, keyPrefix(set, src, z, nil)) && !ev.anyReached() {
			return automation.ReasonConditionNoLongerMet
		}
		return automation.ReasonSuperseded
	}
	for i := range ev.levels {
		if strings.HasPrefix(row.SchedulerKey, keyPrefix(set, src, z, &ev.levels[i])) {
			if !ev.reached[i] {
				return automation.ReasonConditionNoLongerMet
			}
			return automation.ReasonSuperseded
		}
	}
	return automation.ReasonSuperseded
}
