// Package replay runs a scenario file on a simulated clock (ARCHITECTURE.md §9): the same
// pipeline as production - events → scheduler rows → due-work poller → outbox → dispatch -
// on the embedded runtime, with the clock jumping to the next instant where something can
// happen on the tick grid (start + k·tick). Same file, same output.
package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/reminder"
)

// Scenario is the scenario file. Unknown fields are rejected.
type Scenario struct {
	Start            time.Time         `json:"start"` // UTC
	Until            time.Time         `json:"until"` // UTC, inclusive
	Tick             string            `json:"tick"`  // Go duration, e.g. "30s"
	BusinessUnits    []BusinessUnit    `json:"businessUnits"`
	ReminderSettings []json.RawMessage `json:"reminderSettings"`
	Inputs           []Input           `json:"inputs"`

	tick     time.Duration
	settings []reminder.Setting
	order    []int // input indexes by arrival instant (stable)
}

// BusinessUnit is a scenario business unit.
type BusinessUnit struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	TimeZone string `json:"timeZone"` // IANA id
}

// Input is one timed input. Exactly one kind field is set (today: event).
type Input struct {
	At    time.Time       `json:"at"` // arrival instant, UTC
	Event json.RawMessage `json:"event,omitempty"`
}

// MaxTicks bounds how many grid ticks a scenario may span (a year of 30 s ticks is ~1.05M).
const MaxTicks = 20_000_000

// MaxInputs bounds the number of inputs in one scenario file.
const MaxInputs = 1_000_000

// Parse decodes and validates a scenario. Static configuration (business units,
// settings, times) must be valid or nothing runs; input contents are checked when they are
// replayed, so a bad event becomes a "rejected" line and the run goes on. Errors name the
// offending field (e.g. "businessUnits[1].timeZone").
func Parse(raw []byte) (*Scenario, error) {
	var sc Scenario
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("scenario: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return nil, errors.New("scenario: trailing data after the object")
	}
	var errs []error
	bad := func(f string, a ...any) { errs = append(errs, fmt.Errorf("scenario: "+f, a...)) }
	if sc.Start.IsZero() || sc.Until.IsZero() {
		bad("start and until are required (RFC 3339 UTC)")
	} else if !sc.Until.After(sc.Start) {
		bad("until %s must be after start %s", sc.Until.Format(time.RFC3339), sc.Start.Format(time.RFC3339))
	}
	sc.Start, sc.Until = sc.Start.UTC(), sc.Until.UTC()
	tick, err := time.ParseDuration(sc.Tick)
	switch {
	case err != nil:
		bad("tick %q is not a duration like \"30s\"", sc.Tick)
	case tick < time.Second || tick > time.Hour || tick%time.Second != 0:
		bad("tick must be whole seconds from 1s to 1h, got %s", sc.Tick)
	case sc.Until.Sub(sc.Start)/tick > MaxTicks:
		bad("start..until spans more than %d ticks", MaxTicks)
	}
	sc.tick = tick
	buIDs := map[string]bool{}
	for i, bu := range sc.BusinessUnits {
		switch {
		case bu.ID == "":
			bad("businessUnits[%d].id is required", i)
		case buIDs[bu.ID]:
			bad("businessUnits[%d].id %q is a duplicate", i, bu.ID)
		}
		buIDs[bu.ID] = true
		if _, err := localtime.LoadZone(bu.TimeZone); err != nil {
			bad("businessUnits[%d].timeZone: %v", i, err)
		}
	}
	guids := map[string]bool{}
	for i, rawSet := range sc.ReminderSettings {
		set, err := reminder.ParseSetting(rawSet)
		if err != nil {
			bad("reminderSettings[%d]: %v", i, strings.ReplaceAll(err.Error(), "\n", "; "))
			continue
		}
		if !buIDs[set.BusinessUnitID] {
			bad("reminderSettings[%d].businessUnitId: unknown business unit %q", i, set.BusinessUnitID)
		}
		if guids[set.Guid] {
			bad("reminderSettings[%d].guid %s is a duplicate", i, set.Guid)
		}
		guids[set.Guid] = true
		sc.settings = append(sc.settings, set)
	}
	if len(sc.Inputs) > MaxInputs {
		bad("more than %d inputs", MaxInputs)
	}
	for i, in := range sc.Inputs {
		if in.At.IsZero() {
			bad("inputs[%d].at is required", i)
		}
		if len(in.Event) == 0 {
			bad("inputs[%d] has no input kind (expected \"event\")", i)
		}
		sc.order = append(sc.order, i)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.SliceStable(sc.order, func(a, b int) bool { return sc.Inputs[sc.order[a]].At.Before(sc.Inputs[sc.order[b]].At) })
	return &sc, nil
}
