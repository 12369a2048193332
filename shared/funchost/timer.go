package funchost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// TimerInfo is a timer trigger's Data value (docs/functions-protocol.md#timer-trigger): TimerInfo serialized by the host as a
// real JSON object, not double-encoded.
type TimerInfo struct {
	Schedule TimerSchedule
	// ScheduleStatus is nil when the host sends null: useMonitor false, a schedule shorter
	// than a minute, or no storage configured.
	ScheduleStatus *ScheduleStatus
	// IsPastDue is only computed for invocations at host startup; it stays false when the
	// previous run overran its slot. Compare now with ScheduleStatus.Next for that.
	IsPastDue bool
}

// TimerSchedule is the serialized schedule; the host only exposes AdjustForDST.
type TimerSchedule struct {
	AdjustForDST bool
}

// ScheduleStatus is the timer monitor's record; times are UTC (zone-less values are read
// as UTC).
type ScheduleStatus struct {
	Last        time.Time
	Next        time.Time
	LastUpdated time.Time
}

// DecodeTimer decodes the timer binding named binding from req.Data. It accepts the
// object the host sends and, defensively, a JSON string holding that object.
func DecodeTimer(req *InvocationRequest, binding string) (*TimerInfo, error) {
	field := "Data." + binding
	fail := func(f string, err error) error { return &DecodeError{Binding: binding, Field: f, Err: err} }
	if req == nil {
		return nil, fail(field, ErrBindingNotFound)
	}
	raw, ok := lookupKey(req.Data, binding)
	if !ok {
		return nil, fail(field, ErrBindingNotFound)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		text, _, err := scalarText(raw)
		if err != nil {
			return nil, fail(field, err)
		}
		raw = bytes.TrimSpace([]byte(text))
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fail(field, fmt.Errorf("expected a timer object, got %s", jsonKind(raw)))
	}
	var wire struct {
		Schedule       json.RawMessage
		ScheduleStatus json.RawMessage
		IsPastDue      json.RawMessage
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, fail(field, fmt.Errorf("invalid timer object: %w", err))
	}
	info := &TimerInfo{}
	if !isNull(wire.Schedule) {
		var s struct{ AdjustForDST json.RawMessage }
		if err := json.Unmarshal(wire.Schedule, &s); err != nil {
			return nil, fail(field+".Schedule", fmt.Errorf("expected an object, got %s", jsonKind(wire.Schedule)))
		}
		b, err := parseBool(s.AdjustForDST)
		if err != nil {
			return nil, fail(field+".Schedule.AdjustForDST", err)
		}
		info.Schedule.AdjustForDST = b
	}
	if !isNull(wire.ScheduleStatus) {
		var s struct{ Last, Next, LastUpdated json.RawMessage }
		if err := json.Unmarshal(wire.ScheduleStatus, &s); err != nil {
			return nil, fail(field+".ScheduleStatus", fmt.Errorf("expected an object or null, got %s", jsonKind(wire.ScheduleStatus)))
		}
		st := &ScheduleStatus{}
		for _, p := range []struct {
			name string
			raw  json.RawMessage
			dst  *time.Time
		}{{"Last", s.Last, &st.Last}, {"Next", s.Next, &st.Next}, {"LastUpdated", s.LastUpdated, &st.LastUpdated}} {
			t, _, err := parseTime(p.raw)
			if err != nil {
				return nil, fail(field+".ScheduleStatus."+p.name, err)
			}
			*p.dst = t
		}
		info.ScheduleStatus = st
	}
	b, err := parseBool(wire.IsPastDue)
	if err != nil {
		return nil, fail(field+".IsPastDue", err)
	}
	info.IsPastDue = b
	return info, nil
}
