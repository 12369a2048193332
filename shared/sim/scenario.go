package sim

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/replay"
)

// Scenario renders w as a replay scenario file (testdata/scenarios format): the simulator
// runs the real pipeline through replay, and a failing history can be replayed by hand
// (`automation replay`) from this file.
func (w *Workload) Scenario() ([]byte, error) {
	type obj = map[string]any
	var bus []obj
	for _, u := range w.Units {
		bus = append(bus, obj{"id": u.ID, "name": u.ID, "timeZone": u.Zone})
	}
	settings := []json.RawMessage{}
	for _, s := range w.Dates {
		b, _ := json.Marshal(w.dateSetting(s, s.SendTime))
		settings = append(settings, b)
	}
	for _, s := range w.Thresholds {
		b, _ := json.Marshal(obj{"guid": s.Guid, "businessUnitId": s.Unit, "name": "Class filling up", "sourceType": "ClassSession",
			"triggerType": "ThresholdCondition", "triggerKey": "booking",
			"threshold": obj{"metric": obj{"key": "bookedPercent", "field": "booked", "of": "capacity"}, "levels": s.Levels, "firingPolicy": "OncePerThreshold"},
			"template":  "class-filling", "channels": []string{"log"}, "recipients": obj{"field": "coachEmail"}, "isActive": true, "maxLatenessHours": 48})
		settings = append(settings, b)
	}
	var templates []obj
	for _, k := range []string{"police-vetting-expiry", "contract-renewal", "membership-renewal", "class-filling", "report-ready", "redeem-done"} {
		templates = append(templates, obj{"key": k, "subject": k + " {{.schedulerKey}}", "text": "to {{.recipient}} on {{.channel}} ({{.deliveryKey}})"})
	}
	inputs := []json.RawMessage{}
	for _, op := range w.Ops {
		in, err := w.input(op)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, in)
	}
	sc := obj{"start": w.Start.Format(time.RFC3339), "until": w.Until.Format(time.RFC3339), "tick": "60s",
		"businessUnits": bus, "reminderSettings": settings, "templates": templates, "inputs": inputs}
	if len(w.Providers) > 0 {
		sc["campaignProviders"] = w.Providers
	}
	if w.Billing != nil {
		sc["billing"] = w.Billing
	}
	return json.MarshalIndent(sc, "", " ")
}

func (w *Workload) dateSetting(s DateSetting, sendTime string) map[string]any {
	tpl := "police-vetting-expiry"
	switch s.Channel {
	case "webhook":
		tpl = "contract-renewal"
	case "sms":
		tpl = "membership-renewal"
	}
	return map[string]any{"guid": s.Guid, "businessUnitId": s.Unit, "name": s.SourceType + " reminder", "sourceType": s.SourceType,
		"triggerType": "DateBased", "triggerKey": s.TriggerKey, "offsetsDays": s.Offsets, "sendLocalTime": sendTime,
		"template": tpl, "channels": []string{s.Channel}, "recipients": map[string]any{"field": s.RecipientField},
		"isActive": true, "maxLatenessHours": 48}
}

func (w *Workload) setting(guid string) (DateSetting, bool) {
	for _, s := range w.Dates {
		if s.Guid == guid {
			return s, true
		}
	}
	return DateSetting{}, false
}

// input is the scenario input of one operation.
func (w *Workload) input(op Op) (json.RawMessage, error) {
	type obj = map[string]any
	at := op.At.UTC().Format(time.RFC3339)
	var in obj
	switch op.Kind {
	case OpEvent, OpDelete, OpPoison:
		ev := obj{"specversion": "1.0", "id": op.EventID, "source": "/sim", "type": op.SourceType + ".Upserted", "time": at,
			"businessunitid": op.Unit, "entitytype": op.SourceType, "entityguid": op.Source, "revision": op.Revision,
			"datacontenttype": "application/json"}
		switch {
		case op.Kind == OpDelete:
			ev["type"], ev["data"] = op.SourceType+".deleted", nil
		case op.SourceType == "ClassSession":
			ev["data"] = obj{"title": "class", "booked": op.Booked, "capacity": op.Capacity, "coachEmail": op.Email}
		default:
			s := w.sourceSetting(op.SourceType)
			ev["data"] = obj{s.TriggerKey: op.Date, s.RecipientField: op.Email, "isActive": true}
		}
		in = obj{"at": at, "event": ev}
	case OpSendTime:
		s, ok := w.setting(op.Setting)
		if !ok {
			return nil, fmt.Errorf("sim: sendTime op for unknown setting %s", op.Setting)
		}
		in = obj{"at": at, "settingUpsert": w.dateSetting(s, op.SendTime)}
	case OpDeactivate:
		in = obj{"at": at, "settingDeactivate": obj{"guid": op.Setting}}
	case OpFault:
		in = obj{"at": at, "channelFault": obj{"channel": op.Channel, "mode": op.Mode, "until": op.FaultUntil.UTC().Format(time.RFC3339)}}
	case OpReport:
		var m obj
		if err := json.Unmarshal(op.Raw, &m); err != nil {
			return nil, err
		}
		m["at"] = at
		in = m
	case OpRegistry:
		in = obj{"at": at, "registry": op.Raw}
	case OpIngest:
		in = obj{"at": at, "ingest": op.Raw}
	case OpCampaign:
		in = obj{"at": at, "campaign": op.Raw}
	case OpBudget:
		in = obj{"at": at, "budget": obj{"businessUnitId": op.Unit, "campaignId": budgetCampaign, "maxCost": op.MaxCost, "reason": "sim: support raises the budget"}}
	default:
		return nil, fmt.Errorf("sim: unknown op kind %q", op.Kind)
	}
	return json.Marshal(in)
}

// sourceSetting is the (first) date setting of a source type: its trigger and recipient
// fields.
func (w *Workload) sourceSetting(sourceType string) DateSetting {
	for _, s := range w.Dates {
		if s.SourceType == sourceType {
			return s
		}
	}
	return DateSetting{TriggerKey: "expiresOn", RecipientField: "staffEmail"}
}

// Parse turns w's scenario into the replay's form.
func (w *Workload) Parse() (*replay.Scenario, error) {
	raw, err := w.Scenario()
	if err != nil {
		return nil, err
	}
	return replay.Parse(raw)
}
