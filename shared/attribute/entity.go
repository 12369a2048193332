package attribute

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// CapPrefix prefixes the attribute code under which a cap's spend is kept on the entity
// ("cap:{budget}", a number with the cap's period).
const CapPrefix = "cap:"

// Fired is a crossing of one attribute of one entity, after caps: Fired false when its cap
// refused it (no trigger, no reset).
type Fired struct {
	AttributeCode string
	Crossing
}

// RulesFunc gives the period rules (zone, week start) of an instruction.
type RulesFunc func(Instruction) (Rules, error)

// ApplyEntity applies ins — every non-hot instruction of one event for one entity, in order —
// to states (by attribute code; absent = no row). It returns the states it changed (caps
// included; a state the event left as it was is not returned, so nothing is written for it) and every crossing with Fired set after the caps: a threshold with a cap fires
// only while the cap's spend in its period plus the cost stays within the limit, and then
// spends the cost; RESET_ON_TRIGGER applies to fired crossings only. Pure: states is not
// modified. Errors: Apply's, or the rules', for the first instruction that fails (nothing of
// the entity is to be written then).
func ApplyEntity(states map[string]State, ins []Instruction, at time.Time, rules RulesFunc) (map[string]State, []Fired, error) {
	cur := make(map[string]State, len(states))
	for k, v := range states {
		cur[k] = v
	}
	changed := map[string]State{}
	var out []Fired
	for _, in := range ins {
		r, err := rules(in)
		if err != nil {
			return nil, nil, err
		}
		s, cs, err := apply(cur[in.AttributeCode], in, at, r)
		if err != nil {
			return nil, nil, err
		}
		for i := range cs {
			c := &cs[i]
			if c.Threshold.Cap == nil {
				continue
			}
			code := CapPrefix + c.Threshold.Cap.Budget
			spent, allowed, err := spend(cur[code], *c.Threshold.Cap, in.AttributeCode, at, r)
			if err != nil {
				return nil, nil, err
			}
			c.Fired = allowed
			if allowed {
				cur[code], changed[code] = spent, spent
			}
		}
		s = resetAfter(s, cs)
		if s.Exists && !same(s, cur[in.AttributeCode]) {
			cur[in.AttributeCode], changed[in.AttributeCode] = s, s
		}
		for _, c := range cs {
			out = append(out, Fired{AttributeCode: in.AttributeCode, Crossing: c})
		}
	}
	return changed, out, nil
}

// same reports whether two states would store the same row.
func same(a, b State) bool {
	return a.Exists == b.Exists && a.Type == b.Type && FormatValue(a) == FormatValue(b) && a.Period == b.Period &&
		a.PeriodRule == b.PeriodRule && a.LastEventOn.Equal(b.LastEventOn)
}

// spend adds cap.Cost to the cap's spend in the period of at, if it stays within the limit;
// an at whose period is older than the stored spend's is refused (its spend is not known).
func spend(old State, c Cap, code string, at time.Time, r Rules) (State, bool, error) {
	limit, err := parseDecimal(code, "cap limit", c.Limit)
	if err != nil {
		return old, false, err
	}
	cost, err := parseDecimal(code, "cap cost", c.Cost)
	if err != nil {
		return old, false, err
	}
	// A late event of a period the cap row has already left cannot be checked against that
	// period's spend (the row keeps only the latest period): refused, never fired for free.
	if p := c.Period; p != "" && p != PeriodLifetime && old.Exists && old.PeriodRule == PeriodRule(p, r) {
		if key := PeriodKey(p, at, r); old.Period != "" && periodBefore(key, old.Period) {
			return old, false, nil
		}
	}
	next, _, err := apply(old, Instruction{AttributeCode: CapPrefix + c.Budget, Operation: OpIncrement, Period: c.Period, Step: jsonNumber(cost)}, at, r)
	if err != nil {
		return old, false, err
	}
	if next.Number.GreaterThan(limit) {
		return old, false, nil
	}
	return next, true, nil
}

// SortedCodes lists the codes of a state map in order (deterministic writes).
func SortedCodes(m map[string]State) []string { return slices.Sorted(maps.Keys(m)) }

func jsonNumber(d decimal.Decimal) json.Number { return json.Number(d.String()) }
