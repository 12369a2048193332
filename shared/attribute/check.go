package attribute

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
)

// InstructionError is an instruction the engine refuses whatever the stored value: Rule
// names the check (one of InstructionRules), Member is a JSON Pointer relative to the
// instruction ("/step", "/thresholds/0/value", "" for the whole instruction).
type InstructionError struct {
	Rule   string
	Member string
	Reason string
}

func (e *InstructionError) Error() string { return e.Member + ": " + e.Reason }

// instructionRule is one refusal of CheckInstruction.
type instructionRule struct {
	name  string
	check func(in Instruction) *InstructionError
}

// counterPeriods and streakPeriods are the periods applyCounter and applyStreak take.
var (
	counterPeriods = []string{PeriodLifetime, PeriodDaily, PeriodWeekly, PeriodMonthly, PeriodYearly}
	streakPeriods  = []string{PeriodDaily, PeriodWeekly}
)

// instructionRules are the engine's static checks, in order. The registry runs them when a
// definition is saved (gateway.Checker.CheckDefinition) and the engine when a tracking
// message arrives (ParsePayload), so the two cannot disagree: an instruction saved is an
// instruction the engine executes (issue 33, item 5).
var instructionRules = []instructionRule{
	{"operation", func(in Instruction) *InstructionError {
		switch in.Operation {
		case OpIncrement, OpDecrement, OpComputeGap, OpCheckAndUpdateTimer, OpAppendUnique, OpSetTrueOnce, OpStreakIncrement:
			return nil
		}
		return &InstructionError{Member: "/operation", Reason: fmt.Sprintf("unknown operation %q", in.Operation)}
	}},
	{"reserved-code", func(in Instruction) *InstructionError {
		if strings.HasPrefix(in.AttributeCode, CapPrefix) {
			return &InstructionError{Member: "/attribute_code", Reason: fmt.Sprintf("%q is reserved for caps", CapPrefix)}
		}
		return nil
	}},
	{"column-bounds", func(in Instruction) *InstructionError {
		// The columns' bounds (KeyBounds): a longer value could never be stored, and SQL
		// Server would refuse its key (docs/attributes.md#store).
		for _, f := range []struct {
			name, v string
			max     int
		}{{"target_entity_id", in.TargetEntityID, MaxEntityIDLen}, {"entity_type", in.EntityType, MaxEntityTypeLen}, {"attribute_code", in.AttributeCode, MaxAttributeCodeLen}} {
			if len(f.v) > f.max {
				return &InstructionError{Member: "/" + f.name, Reason: fmt.Sprintf("is at most %d bytes", f.max)}
			}
		}
		return nil
	}},
	{"cap-budget", func(in Instruction) *InstructionError {
		// A cap's spend is kept under the attribute code CapPrefix + budget, within the
		// attribute code's bound.
		for j, th := range in.Thresholds {
			if th.Cap != nil && len(CapPrefix)+len(th.Cap.Budget) > MaxAttributeCodeLen {
				return &InstructionError{Member: fmt.Sprintf("/thresholds/%d/cap/budget", j), Reason: fmt.Sprintf("is at most %d bytes", MaxAttributeCodeLen-len(CapPrefix))}
			}
		}
		return nil
	}},
	{"hot-shape", func(in Instruction) *InstructionError {
		if in.Hot && (len(in.Thresholds) > 0 || (in.Operation != OpIncrement && in.Operation != OpDecrement) || (in.Period != "" && in.Period != PeriodLifetime)) {
			return &InstructionError{Member: "/hot", Reason: fmt.Sprintf("attribute %s: a hot counter is a LIFETIME INCREMENT or DECREMENT without thresholds", in.AttributeCode)}
		}
		return nil
	}},
	{"period", func(in Instruction) *InstructionError {
		allowed := map[string][]string{OpIncrement: counterPeriods, OpDecrement: counterPeriods, OpStreakIncrement: streakPeriods}[in.Operation]
		if in.Period == "" || allowed == nil {
			return nil
		}
		for _, p := range allowed {
			if p == in.Period {
				return nil
			}
		}
		return &InstructionError{Member: "/period_type", Reason: fmt.Sprintf("%s takes period %s, not %q", in.Operation, strings.Join(allowed, ", "), in.Period)}
	}},
	{"step", func(in Instruction) *InstructionError {
		if in.Step == "" || (in.Operation != OpIncrement && in.Operation != OpDecrement) {
			return nil
		}
		d, err := decimal.NewFromString(string(in.Step))
		if err != nil || strings.ContainsAny(string(in.Step), "eE") {
			return &InstructionError{Member: "/step", Reason: fmt.Sprintf("step %q is not an exact decimal", string(in.Step))}
		}
		if !d.IsPositive() {
			return &InstructionError{Member: "/step", Reason: fmt.Sprintf("step must be positive, got %s", in.Step)}
		}
		return nil
	}},
	{"hot-step", func(in Instruction) *InstructionError {
		if !in.Hot {
			return nil
		}
		if _, err := hotMicros(in); err != nil {
			return &InstructionError{Member: "/step", Reason: fmt.Sprintf("a hot counter's step is a positive decimal of at most 6 fraction digits and at most 1e9, got %s", in.Step)}
		}
		return nil
	}},
	{"threshold-value", func(in Instruction) *InstructionError {
		if in.Operation == OpSetTrueOnce || in.Operation == OpAppendUnique {
			return nil // SET_TRUE_ONCE fires on the flag's change, not by value; APPEND_UNIQUE has none
		}
		for j, t := range in.Thresholds {
			if _, err := parseDecimal(in.AttributeCode, "threshold", t.Value); err != nil {
				return &InstructionError{Member: fmt.Sprintf("/thresholds/%d/value", j), Reason: fmt.Sprintf("threshold %q is not an exact decimal", string(t.Value))}
			}
		}
		return nil
	}},
	{"cap-amounts", func(in Instruction) *InstructionError {
		for j, t := range in.Thresholds {
			if t.Cap == nil {
				continue
			}
			for _, x := range []struct {
				name string
				v    string
			}{{"limit", string(t.Cap.Limit)}, {"cost", string(t.Cap.Cost)}} {
				if _, err := parseDecimal(in.AttributeCode, "cap "+x.name, json.Number(x.v)); err != nil {
					return &InstructionError{Member: fmt.Sprintf("/thresholds/%d/cap/%s", j, x.name), Reason: fmt.Sprintf("cap %s %q is not an exact decimal", x.name, x.v)}
				}
			}
			if t.Cap.Period != "" {
				ok := false
				for _, p := range counterPeriods {
					ok = ok || p == t.Cap.Period
				}
				if !ok {
					return &InstructionError{Member: fmt.Sprintf("/thresholds/%d/cap/period_type", j), Reason: fmt.Sprintf("a cap takes period %s, not %q", strings.Join(counterPeriods, ", "), t.Cap.Period)}
				}
			}
		}
		return nil
	}},
	{"time-zone", func(in Instruction) *InstructionError {
		if in.TimeZone == "" {
			return nil
		}
		if _, err := localtime.LoadZone(in.TimeZone); err != nil {
			return &InstructionError{Member: "/time_zone", Reason: fmt.Sprintf("unknown time zone %q", in.TimeZone)}
		}
		return nil
	}},
	{"week-start", func(in Instruction) *InstructionError {
		if _, err := WeekdayOf(in.WeekStart); err != nil {
			return &InstructionError{Member: "/week_start", Reason: fmt.Sprintf("must be a weekday name (MONDAY..SUNDAY), got %q", in.WeekStart)}
		}
		return nil
	}},
	{"max-items", func(in Instruction) *InstructionError {
		if in.Operation == OpAppendUnique && (in.MaxItems == nil || *in.MaxItems <= 0) {
			return &InstructionError{Member: "/max_items", Reason: "APPEND_UNIQUE needs a positive max_items"}
		}
		return nil
	}},
}

// InstructionRules lists the names of CheckInstruction's refusals, in the order they are
// checked (a test walks each one against the registry).
func InstructionRules() []string {
	out := make([]string, len(instructionRules))
	for i, r := range instructionRules {
		out[i] = r.name
	}
	return out
}

// CheckInstruction is the engine's check of one instruction, independent of the stored
// value and of the event: nil, or the first refusal (an *InstructionError naming its rule
// and member). An instruction it passes can still fail against a stored value of another
// type (docs/attributes.md#bad-input).
func CheckInstruction(in Instruction) *InstructionError {
	for _, r := range instructionRules {
		if err := r.check(in); err != nil {
			err.Rule = r.name
			return err
		}
	}
	return nil
}

// memberPath turns an InstructionError's JSON Pointer into the dotted path ParsePayload's
// errors use after "instructions[i]": "/thresholds/0/cap/budget" → ".thresholds[0].cap.budget".
func memberPath(pointer string) string {
	var b strings.Builder
	for _, seg := range strings.Split(pointer, "/")[1:] {
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
			continue
		}
		b.WriteString("." + seg)
	}
	return b.String()
}

// CheckEventTime is the one bound on an event's time (MaxFutureSkew ahead of now), run by
// the gateway at ingest and by the engine on each tracking message. Errors: automation.Invalid
// on field.
func CheckEventTime(field string, at, now time.Time) error {
	if at.After(now.Add(MaxFutureSkew)) {
		return automation.Invalid(field, "%s is more than %s ahead of now (%s): an event from the future would freeze the entity's order-sensitive attributes",
			at.UTC().Format(time.RFC3339), MaxFutureSkew, now.UTC().Format(time.RFC3339))
	}
	return nil
}
