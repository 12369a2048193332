package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/strictjson"
)

// Scenario is the scenario file. Unknown fields are rejected.
type Scenario struct {
	Start            time.Time         `json:"start"` // UTC
	Until            time.Time         `json:"until"` // UTC, inclusive
	Tick             string            `json:"tick"`  // Go duration, e.g. "30s"
	BusinessUnits    []BusinessUnit    `json:"businessUnits"`
	ReminderSettings []json.RawMessage `json:"reminderSettings"`
	Templates        []json.RawMessage `json:"templates,omitempty"`
	Inputs           []Input           `json:"inputs"`
	// PrintAttributes adds an "attribute" line per value a tracking message wrote (and a
	// "rejected" line per tracking message refused); trigger lines are always printed.
	PrintAttributes bool `json:"printAttributes,omitempty"`
	// CampaignProviders are simulated action providers (campaign.go).
	CampaignProviders []json.RawMessage `json:"campaignProviders,omitempty"`

	tick              time.Duration
	campaignProviders []CampaignProvider
	billing           *Billing // nil: campaigns run without budgets (app.Options.WithoutBudgets)
	settings          []reminder.Setting
	templates         []Template
	order             []int // input indexes by arrival instant (stable)
}

// BusinessUnit is a scenario business unit.
type BusinessUnit struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	TimeZone string `json:"timeZone"` // IANA id
}

// Input is one timed input. Exactly one kind field is set: event, channelFault,
// settingUpsert or settingDeactivate (settings.go), ingest or registry (gateway.go), or one
// of the report kinds (ReportInputs, report.go).
type Input struct {
	At    time.Time       `json:"at"` // arrival instant, UTC
	Event json.RawMessage `json:"event,omitempty"`
	// ChannelFault (parsed) makes a channel fail or time out until a given instant.
	ChannelFault      *ChannelFault      `json:"channelFault,omitempty"`
	SettingUpsert     json.RawMessage    `json:"settingUpsert,omitempty"`
	SettingDeactivate *SettingDeactivate `json:"settingDeactivate,omitempty"`
	// Ingest is a batch of CloudEvents (a JSON array) sent to POST /api/events.
	Ingest json.RawMessage `json:"ingest,omitempty"`
	// IdempotencyKey (ingest only) is sent as the Idempotency-Key header: the same key and
	// batch again gets the stored answer (the ingest line says "replayed").
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
	// Registry is a registry file ({"events":[definition, …]}) imported as a new version.
	Registry json.RawMessage `json:"registry,omitempty"`
	// Campaign is a campaign (with its campaignId) saved through the campaign API (campaign.go).
	Campaign json.RawMessage `json:"campaign,omitempty"`
	// Budget changes a campaign's maxCost as support would (billing.go).
	Budget *BudgetInput `json:"budget,omitempty"`
	ReportInputs
}

// MaxTicks bounds how many grid ticks a scenario may span (a year of 30 s ticks is ~1.05M).
const MaxTicks = 20_000_000

// MaxInputs bounds the number of inputs in one scenario file.
const MaxInputs = 1_000_000

// Settings returns the scenario's validated reminder settings.
func (sc *Scenario) Settings() []reminder.Setting { return sc.settings }

// Channels are the delivery channels a replay offers: the replay's log and webhook, and the
// product's own in-app inbox and event channel (the gateway), which app.Open adds.
var Channels = map[string]bool{"log": true, "webhook": true, "sms": true, "inbox": true, "event": true}

// Supported simulated-time range.
var (
	minInstant = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	maxInstant = time.Date(9998, 12, 31, 0, 0, 0, 0, time.UTC)
)

// MaxSpan bounds until − start.
const MaxSpan = 100 * 365 * 24 * time.Hour

// ParseFile reads the scenario file at path and parses it (Parse); its errors are
// os.ReadFile's (which name the path) and Parse's, unwrapped.
func ParseFile(path string) (*Scenario, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(raw)
}

// Parse decodes and validates a scenario. Static configuration (business units,
// settings, times) must be valid or nothing runs; input contents are checked when they are
// replayed, so a bad event becomes a "rejected" line and the run goes on. Errors name the
// offending field with its path (e.g. "businessUnits[1].timeZone", "inputs[3].at").
func Parse(raw []byte) (*Scenario, error) {
	var top struct {
		Start            json.RawMessage   `json:"start"`
		Until            json.RawMessage   `json:"until"`
		Tick             json.RawMessage   `json:"tick"`
		BusinessUnits    []json.RawMessage `json:"businessUnits"`
		ReminderSettings []json.RawMessage `json:"reminderSettings"`
		Templates        []json.RawMessage `json:"templates"`
		Inputs           []json.RawMessage `json:"inputs"`
		PrintAttributes  bool              `json:"printAttributes"`
		Providers        []json.RawMessage `json:"campaignProviders"`
		Billing          json.RawMessage   `json:"billing"`
	}
	if err := strictDecode(raw, &top); err != nil {
		return nil, fmt.Errorf("scenario: %v", err)
	}
	var sc Scenario
	sc.PrintAttributes = top.PrintAttributes
	var errs []error
	bad := func(f string, a ...any) { errs = append(errs, fmt.Errorf("scenario: "+f, a...)) }
	instant := func(field string, raw json.RawMessage) time.Time {
		var str string
		if len(raw) == 0 {
			bad("%s is required (RFC 3339 UTC, e.g. \"2026-09-01T00:00:00Z\")", field)
			return time.Time{}
		}
		if err := json.Unmarshal(raw, &str); err != nil {
			bad("%s must be a string (RFC 3339 UTC)", field)
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339, str)
		if err != nil {
			bad("%s %q is not RFC 3339 (e.g. \"2026-09-01T00:00:00Z\")", field, str)
			return time.Time{}
		}
		t = t.UTC()
		if t.Before(minInstant) || t.After(maxInstant) {
			bad("%s %s is outside %s..%s", field, str, minInstant.Format("2006-01-02"), maxInstant.Format("2006-01-02"))
			return time.Time{}
		}
		return t
	}
	sc.Start, sc.Until = instant("start", top.Start), instant("until", top.Until)
	timesOK := !sc.Start.IsZero() && !sc.Until.IsZero()
	if timesOK && !sc.Until.After(sc.Start) {
		bad("until %s must be after start %s", sc.Until.Format(time.RFC3339), sc.Start.Format(time.RFC3339))
		timesOK = false
	}
	if timesOK && sc.Until.Sub(sc.Start) > MaxSpan {
		bad("until − start is more than %d days (about 100 years)", int(MaxSpan/(24*time.Hour)))
		timesOK = false
	}
	if len(top.Tick) == 0 || json.Unmarshal(top.Tick, &sc.Tick) != nil {
		bad("tick is required (a duration string like \"30s\")")
	} else if tick, err := time.ParseDuration(sc.Tick); err != nil {
		bad("tick %q is not a duration like \"30s\"", sc.Tick)
	} else if tick < time.Second || tick > time.Hour || tick%time.Second != 0 {
		bad("tick must be whole seconds from 1s to 1h, got %s", sc.Tick)
	} else {
		sc.tick = tick
		if timesOK && sc.Until.Sub(sc.Start)/tick > MaxTicks {
			bad("start..until spans more than %d ticks of %s", MaxTicks, sc.Tick)
		}
	}
	buIDs := map[string]bool{}
	for i, rawBU := range top.BusinessUnits {
		var bu BusinessUnit
		if err := strictDecode(rawBU, &bu); err != nil {
			bad("businessUnits[%d]: %v", i, err)
			continue
		}
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
		sc.BusinessUnits = append(sc.BusinessUnits, bu)
	}
	guids := map[string]bool{}
	for i, rawSet := range top.ReminderSettings {
		set, err := reminder.ParseSetting(rawSet)
		if err == nil {
			err = set.Validate(Channels)
		}
		if err != nil {
			for _, e := range unjoin(err) {
				var ae *automation.Error
				if errors.As(e, &ae) && ae.Field != "" && ae.Field != "setting" {
					bad("reminderSettings[%d].%s: %s", i, ae.Field, ae.Message)
				} else if errors.As(e, &ae) {
					bad("reminderSettings[%d]: %s", i, ae.Message)
				} else {
					bad("reminderSettings[%d]: %v", i, e)
				}
			}
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
	sc.templates = parseTemplates(top.Templates, buIDs, bad)
	sc.campaignProviders = parseCampaignProviders(top.Providers, bad)
	sc.billing = parseBilling(top.Billing, bad)
	if len(top.Inputs) > MaxInputs {
		bad("more than %d inputs", MaxInputs)
		top.Inputs = nil
	}
	for i, rawIn := range top.Inputs {
		var in struct {
			At                json.RawMessage `json:"at"`
			Event             json.RawMessage `json:"event"`
			ChannelFault      json.RawMessage `json:"channelFault"`
			SettingUpsert     json.RawMessage `json:"settingUpsert"`
			SettingDeactivate json.RawMessage `json:"settingDeactivate"`
			Ingest            json.RawMessage `json:"ingest"`
			IdempotencyKey    *string         `json:"idempotencyKey"`
			Registry          json.RawMessage `json:"registry"`
			Campaign          json.RawMessage `json:"campaign"`
			Budget            json.RawMessage `json:"budget"`
			ReportInputs
		}
		if err := strictDecode(rawIn, &in); err != nil {
			bad("inputs[%d]: %v", i, err)
			sc.Inputs = append(sc.Inputs, Input{})
			continue
		}
		at := instant(fmt.Sprintf("inputs[%d].at", i), in.At)
		var fault *ChannelFault
		input := Input{At: at, Event: in.Event, ReportInputs: in.ReportInputs}
		if in.IdempotencyKey != nil && len(in.Ingest) == 0 {
			bad("inputs[%d].idempotencyKey is only for an ingest input", i)
		}
		switch kinds := in.ReportInputs.count() + min(len(in.Event), 1) + min(len(in.ChannelFault), 1) +
			min(len(in.SettingUpsert), 1) + min(len(in.SettingDeactivate), 1) + min(len(in.Ingest), 1) + min(len(in.Registry), 1) + min(len(in.Campaign), 1) +
			min(len(in.Budget), 1); {
		case kinds > 1:
			bad("inputs[%d] has two input kinds or more; give one", i)
		case len(in.Ingest) > 0:
			// The events themselves are checked when replayed: a bad one is a "rejected" line.
			if t := bytes.TrimSpace(in.Ingest); len(t) == 0 || t[0] != '[' {
				bad("inputs[%d].ingest must be a JSON array of CloudEvents (a batch)", i)
			}
			input.Ingest = in.Ingest
			if in.IdempotencyKey != nil {
				if k := *in.IdempotencyKey; k == "" || len(k) > 255 {
					bad("inputs[%d].idempotencyKey must be 1..255 characters", i)
				}
				input.IdempotencyKey = *in.IdempotencyKey
			}
		case len(in.Campaign) > 0:
			var head struct {
				CampaignID string `json:"campaignId"`
			}
			if json.Unmarshal(in.Campaign, &head) != nil || head.CampaignID == "" {
				bad("inputs[%d].campaign must be an object with a campaignId", i)
			}
			input.Campaign = in.Campaign
		case len(in.Budget) > 0:
			input.Budget = parseBudgetInput(i, in.Budget, bad)
		case len(in.Registry) > 0:
			if t := bytes.TrimSpace(in.Registry); len(t) == 0 || t[0] != '{' {
				bad("inputs[%d].registry must be a registry file ({\"events\":[definition, …]})", i)
			}
			input.Registry = in.Registry
		case len(in.ChannelFault) > 0:
			fault = parseFault(i, in.ChannelFault, at, bad)
		case len(in.SettingUpsert) > 0 || len(in.SettingDeactivate) > 0:
			errs = append(errs, parseSettingInput(i, in.SettingUpsert, in.SettingDeactivate, buIDs, &input)...)
		case kinds == 0:
			bad("inputs[%d] has no input kind (expected \"event\", \"channelFault\", \"settingUpsert\", \"settingDeactivate\", \"ingest\", \"registry\", \"campaign\", \"budget\" or %s)", i, reportKindNames)
		}
		if timesOK && !at.IsZero() && at.Before(sc.Start) {
			bad("inputs[%d].at %s is before start", i, at.Format(time.RFC3339))
		}
		input.ChannelFault = fault
		sc.Inputs = append(sc.Inputs, input)
		sc.order = append(sc.order, i)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.SliceStable(sc.order, func(a, b int) bool { return sc.Inputs[sc.order[a]].At.Before(sc.Inputs[sc.order[b]].At) })
	return &sc, nil
}

// strictDecode decodes one JSON value into v, rejecting unknown fields and trailing data.
func strictDecode(raw []byte, v any) error {
	switch err := strictjson.Decode(raw, v); {
	case errors.Is(err, strictjson.ErrTrailing):
		return errors.New("trailing data after the object")
	case err != nil:
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// unjoin splits an errors.Join result into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
