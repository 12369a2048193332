package reminder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
)

// DecodeSetting reads a setting as a client sends it to the management API and validates
// it against the channels that exist (nil: any). Errors say what to fix, all at once:
//   - automation.CodeMalformed (HTTP 400) for a body that is not one JSON object, an unknown
//     field or a value of the wrong JSON type, naming the field;
//   - automation.CodeInvalidInput (HTTP 422) with one field error per problem
//     (automation.InvalidFields): "offsetsDays[1]", "sendLocalTime", "threshold.metric",
//     "channels", "recipients", …
func DecodeSetting(raw []byte, channels map[string]bool) (Setting, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return Setting{}, &automation.Error{Code: automation.CodeMalformed, Message: "the body must be one JSON object (a reminder setting)"}
	}
	// Times of day are checked first so "25:00" is reported against its field; a bad one is
	// then blanked so the rest of the setting is still validated and every problem is
	// reported at once.
	var errs []error
	badTime := map[string]bool{}
	checkTime := func(name string, v json.RawMessage) bool {
		if len(v) == 0 || string(v) == "null" {
			return true
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			errs = append(errs, automation.Invalid(name, "must be a string \"HH:MM\""))
			badTime[name] = true
			return false
		}
		if _, err := localtime.ParseTimeOfDay(s); err != nil {
			errs = append(errs, automation.Invalid(name, "%v", err))
			badTime[name] = true
			return false
		}
		return true
	}
	if !checkTime("sendLocalTime", fields["sendLocalTime"]) {
		fields["sendLocalTime"] = json.RawMessage(`"00:00"`)
	}
	if th, ok := fields["threshold"]; ok {
		var t map[string]json.RawMessage
		if json.Unmarshal(th, &t) == nil {
			if w, ok := t["sendWindow"]; ok {
				var win map[string]json.RawMessage
				if json.Unmarshal(w, &win) == nil {
					okStart := checkTime("threshold.sendWindow.start", win["start"])
					okEnd := checkTime("threshold.sendWindow.end", win["end"])
					if !okStart || !okEnd {
						win["start"], win["end"] = json.RawMessage(`"00:00"`), json.RawMessage(`"01:00"`)
						t["sendWindow"], _ = json.Marshal(win)
						fields["threshold"], _ = json.Marshal(t)
					}
				}
			}
		}
	}
	if len(errs) > 0 {
		raw, _ = json.Marshal(fields)
	}
	var s Setting
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return Setting{}, &automation.Error{Code: automation.CodeMalformed, Field: te.Field, Message: fmt.Sprintf("must be %s, got %s", jsonKind(te.Type.Kind().String()), te.Value)}
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return Setting{}, &automation.Error{Code: automation.CodeMalformed, Field: name, Message: "unknown field"}
		default:
			return Setting{}, &automation.Error{Code: automation.CodeMalformed, Message: "the body is not a valid setting: " + strings.TrimPrefix(err.Error(), "json: ")}
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return Setting{}, &automation.Error{Code: automation.CodeMalformed, Message: "the body holds more than one JSON value"}
	}
	if err := s.Validate(channels); err != nil {
		errs = append(errs, unjoin(err)...)
	}
	errs = append(errs, s.validateWrite()...)
	if len(errs) > 0 {
		return Setting{}, automation.InvalidFields(errs...)
	}
	return s, nil
}

// unjoin splits an errors.Join result into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
