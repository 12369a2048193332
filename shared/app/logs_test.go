package app_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/logmask"
)

var (
	unmaskedEmail = regexp.MustCompile(`[A-Za-z0-9._%+-]{2,}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	unmaskedPhone = regexp.MustCompile(`\+\d[\d\s().-]{7,}\d`)
)

// checkLogLines scans the JSON log lines of a scenario run (docs/operations.md#logs): every line is
// JSON; no string value holds an e-mail address or a phone number the masking handler would
// still change; every line about a row names the row (schedulerKey, businessUnitId), the
// function invocation (function, invocationId) and the step, warnings and errors carry an
// error code, and outcomes and event lines carry the source event id.
func checkLogLines(t *testing.T, lines []string) {
	t.Helper()
	rowLines, eventLines := 0, 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("log line is not JSON: %s", l)
			continue
		}
		walkStrings(m, func(k, v string) {
			if logmask.String(v) != v || unmaskedEmail.MatchString(v) || unmaskedPhone.MatchString(v) {
				t.Errorf("unmasked personal data in %q: %s", k, l)
			}
		})
		need := func(why string, keys ...string) {
			for _, k := range keys {
				if s, _ := m[k].(string); s == "" {
					t.Errorf("%s without %s: %s", why, k, l)
				}
			}
		}
		level, _ := m["level"].(string)
		if _, ok := m["schedulerKey"]; ok {
			rowLines++
			need("a line about a row", "businessUnitId", "function", "invocationId", "step")
			if level == "WARN" || level == "ERROR" {
				need("a warning about a row", "errorCode")
			}
			if m["msg"] == "row executed" && (m["outcome"] == "Completed" || m["outcome"] == "Deactivated") {
				need("an outcome", "sourceEventId")
			}
		}
		if m["step"] == "event" {
			eventLines++
			need("a line about an event", "sourceEventId", "businessUnitId", "function", "invocationId")
		}
	}
	// 21 rows executed and 23 deliveries, 20 events applied: the scan must have seen them.
	if rowLines < 40 || eventLines < 20 {
		t.Fatalf("only %d row lines and %d event lines: the log scan would prove nothing", rowLines, eventLines)
	}
}

func walkStrings(v any, fn func(key, s string)) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if s, ok := x.(string); ok {
				fn(k, s)
				continue
			}
			walkStrings(x, fn)
		}
	case []any:
		for _, x := range t {
			walkStrings(x, fn)
		}
	}
}
