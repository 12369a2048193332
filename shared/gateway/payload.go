package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/automation-platform/automation/shared/attribute"
)

// Payload is the fat payload of seed 003 (docs/gateway.md#fat-payload): what every
// gateway route carries. Instructions only on tracking, Notification only on noti.
// Its opening members (event_id to timestamp) are the attribute engine's Origin.
type Payload struct {
	attribute.Origin
	RegistryVersion int64            `json:"registry_version"`
	Route           string           `json:"route"`
	Data            json.RawMessage  `json:"data,omitempty"`
	Instructions    []FatInstruction `json:"instructions,omitempty"`
	Notification    *FatNotification `json:"notification,omitempty"`
}

// FatInstruction is a counter instruction with its target resolved: the attribute engine
// executes it without knowing the event (the attribute engine is a "dumb executor"). It is
// the engine's own attribute.Instruction, so the payload the gateway writes is the shape the
// engine reads: Value is APPEND_UNIQUE's value from data or COMPUTE_GAP's end ("" = the
// event time), From COMPUTE_GAP's start ("" = the stored value).
type FatInstruction = attribute.Instruction

// FatNotification is what the noti route's consumer turns into deliveries.
type FatNotification struct {
	Template   string   `json:"template"`
	Channels   []string `json:"channels"`
	Recipients []string `json:"recipients"`
}

// instructionsFor resolves each instruction's target and value against the event; the
// defaults of docs/gateway.md#fat-payload are filled in (period LIFETIME for counters, DAILY for
// streaks, step 1, reset policy NONE). Errors name the data member (a JSON Pointer into
// the event) that is missing.
func instructionsFor(ins []Instruction, customerID string, data any) ([]FatInstruction, string, error) {
	out := make([]FatInstruction, 0, len(ins))
	for _, in := range ins {
		f := FatInstruction{TargetEntityID: customerID, EntityType: in.EntityType, AttributeCode: in.AttributeCode,
			Operation: in.Operation, Period: in.Period, Step: in.Step, MaxItems: in.MaxItems, Hot: in.Hot,
			TimeZone: in.TimeZone, WeekStart: in.WeekStart}
		if strings.Contains(in.AttributeCode, "{") {
			code, ptr, err := resolveCode(in.AttributeCode, data)
			if err != nil {
				return nil, ptr, err
			}
			f.AttributeCode = code
		}
		if in.EntityIDPointer != "" {
			v, ok := lookup(data, in.EntityIDPointer)
			id, isText := scalarText(v)
			if !ok || !isText || !tokenRE.MatchString(id) {
				return nil, "/data" + in.EntityIDPointer, fmt.Errorf("the %s id for %s is required (a string or number token)", in.EntityType, in.AttributeCode)
			}
			f.TargetEntityID = id
		}
		switch in.Operation {
		case attribute.OpIncrement, attribute.OpDecrement:
			if f.Period == "" {
				f.Period = "LIFETIME"
			}
			if f.Step == "" {
				f.Step = "1"
			}
		case attribute.OpStreakIncrement:
			if f.Period == "" {
				f.Period = "DAILY"
			}
		case attribute.OpAppendUnique:
			v, ok := lookup(data, in.ValuePointer)
			text, isText := scalarText(v)
			if !ok || !isText || len(text) > 200 {
				return nil, "/data" + in.ValuePointer, fmt.Errorf("the value to append to %s is required (a string or number, at most 200 bytes)", in.AttributeCode)
			}
			f.Value = text
		case attribute.OpComputeGap:
			for _, x := range []struct {
				ptr string
				dst *string
			}{{in.FromPointer, &f.From}, {in.ValuePointer, &f.Value}} {
				if x.ptr == "" {
					continue
				}
				v, ok := lookup(data, x.ptr)
				text, isText := scalarText(v)
				if !ok || !isText || len(text) > 64 {
					return nil, "/data" + x.ptr, fmt.Errorf("the gap operand of %s is required (an RFC 3339 instant or a number)", in.AttributeCode)
				}
				*x.dst = text
			}
		}
		for _, t := range in.Thresholds {
			if t.ResetPolicy == "" {
				t.ResetPolicy = "NONE"
			}
			f.Thresholds = append(f.Thresholds, t)
		}
		out = append(out, f)
	}
	return out, "", nil
}

// notificationFor resolves the recipients: the data member named by RecipientPointer (a
// string) and the fixed list, duplicates removed.
func notificationFor(n *Notification, data any) (*FatNotification, string, error) {
	if n == nil {
		return nil, "", errors.New("no notification configured")
	}
	out := &FatNotification{Template: n.Template, Channels: slices.Clone(n.Channels)}
	if n.RecipientPointer != "" {
		v, ok := lookup(data, n.RecipientPointer)
		s, isStr := v.(string)
		if !ok || !isStr || s == "" || len(s) > 320 {
			return nil, "/data" + n.RecipientPointer, errors.New("the recipient is required (a string of at most 320 bytes)")
		}
		out.Recipients = append(out.Recipients, s)
	}
	for _, r := range n.Recipients {
		if !slices.Contains(out.Recipients, r) {
			out.Recipients = append(out.Recipients, r)
		}
	}
	return out, "", nil
}

// resolveCode replaces each "{member}" of an attribute code by that data member (a token).
// Errors name the member's pointer.
func resolveCode(code string, data any) (string, string, error) {
	var bad string
	out := codeMemberRE.ReplaceAllStringFunc(code, func(m string) string {
		name := m[1 : len(m)-1]
		v, ok := lookup(data, "/"+name)
		text, isText := scalarText(v)
		if bad == "" && (!ok || !isText || !tokenRE.MatchString(text)) {
			bad = "/data/" + name
		}
		return text
	})
	if bad != "" {
		return "", bad, fmt.Errorf("the attribute code %s needs %s (a string or number token)", code, bad[len("/data"):])
	}
	if len(out) > 200 {
		return "", "/data", fmt.Errorf("the attribute code %s resolves to more than 200 characters", code)
	}
	return out, "", nil
}
