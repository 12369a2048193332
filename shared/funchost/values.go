package funchost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The host serializes most values with JsonConvert.SerializeObject before putting them
// into the JSON body, so a string arrives as a JSON string whose content is itself a JSON
// string literal ("\"abc\""), an int as "1" (docs/functions-protocol.md#wire-shape "Request payload"). These helpers accept
// both the doubly and the singly encoded forms.

// jsonKind names the kind of a JSON value by its first byte, for error messages.
func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// isNull reports whether raw is absent or the JSON null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// unwrapString returns s without one level of JSON string encoding when s is a JSON
// string literal, and s unchanged otherwise.
func unwrapString(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		var inner string
		if json.Unmarshal([]byte(s), &inner) == nil {
			return inner
		}
	}
	return s
}

// scalarText returns the text a Metadata scalar carries: a JSON string's content
// (unwrapped once more when it is itself a JSON string literal) or a number's or boolean's
// literal. ok is false for a missing or null value.
func scalarText(raw json.RawMessage) (text string, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return "", false, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, fmt.Errorf("invalid JSON string: %w", err)
		}
		return unwrapString(s), true, nil
	case '{', '[':
		return "", false, fmt.Errorf("expected a scalar, got %s", jsonKind(raw))
	default:
		if !json.Valid(raw) {
			return "", false, errors.New("invalid JSON value")
		}
		return string(raw), true, nil
	}
}

// parseInt parses a Metadata integer ("1", 1 or "\"1\"").
func parseInt(raw json.RawMessage) (int64, bool, error) {
	text, ok, err := scalarText(raw)
	if err != nil || !ok {
		return 0, ok, err
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("invalid integer %q", text)
	}
	return n, true, nil
}

// parseBool parses a boolean sent as JSON true/false or as a string.
func parseBool(raw json.RawMessage) (bool, error) {
	text, ok, err := scalarText(raw)
	if err != nil || !ok {
		return false, err
	}
	b, err := strconv.ParseBool(text)
	if err != nil {
		return false, fmt.Errorf("invalid boolean %q", text)
	}
	return b, nil
}

// timeLayouts are the timestamp shapes the host sends: RFC 3339 with Z or an offset
// (Newtonsoft's DateTime/DateTimeOffset output, up to 7 fraction digits), and the same
// without a zone, which the extension uses for its *Utc values and which we read as UTC.
var timeLayouts = []struct {
	layout string
	utc    bool
}{
	{time.RFC3339Nano, false},
	{"2006-01-02T15:04:05.999999999", true},
}

// parseTimestamp parses one of timeLayouts; the result is in UTC.
func parseTimestamp(s string) (time.Time, error) {
	for _, l := range timeLayouts {
		var (
			t   time.Time
			err error
		)
		if l.utc {
			t, err = time.ParseInLocation(l.layout, s, time.UTC)
		} else {
			t, err = time.Parse(l.layout, s)
		}
		if err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid timestamp %q (want RFC 3339, or ISO 8601 without a zone for UTC)", s)
}

// parseTime parses a timestamp value, possibly JSON-encoded twice.
func parseTime(raw json.RawMessage) (time.Time, bool, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return time.Time{}, false, nil
	}
	if raw[0] != '"' {
		return time.Time{}, false, fmt.Errorf("expected a timestamp string, got %s", jsonKind(raw))
	}
	text, _, err := scalarText(raw)
	if err != nil {
		return time.Time{}, false, err
	}
	t, err := parseTimestamp(text)
	if err != nil {
		return time.Time{}, false, err
	}
	return t, true, nil
}

// parseObject decodes a JSON object (or a JSON string holding one) into a map whose
// numbers are json.Number.
func parseObject(raw json.RawMessage) (map[string]any, bool, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, false, nil
	}
	if raw[0] == '"' {
		text, _, err := scalarText(raw)
		if err != nil {
			return nil, false, err
		}
		raw = bytes.TrimSpace([]byte(text))
		if len(raw) == 0 || raw[0] != '{' {
			return nil, false, fmt.Errorf("expected an object, got a string")
		}
	}
	if raw[0] != '{' {
		return nil, false, fmt.Errorf("expected an object, got %s", jsonKind(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, false, fmt.Errorf("invalid object: %w", err)
	}
	return m, true, nil
}
