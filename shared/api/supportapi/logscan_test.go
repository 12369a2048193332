package supportapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/logmask"
	"github.com/automation-platform/automation/shared/logsink"
	"github.com/automation-platform/automation/shared/replay"
)

var (
	// Any address, upper case or percent-encoded, with at least two characters before the
	// separator (a masked one keeps one: "a***@…").
	leakedEmail = regexp.MustCompile(`(?i)[a-z0-9._%+'-]{2,}(?:@|%40)[a-z0-9.-]+\.[a-z]{2,}`)
	leakedPhone = regexp.MustCompile(`(?:\+|%2[bB])\d[\d\s().-]{7,}\d`)
)

// TestScenarioLogsCarryNoPersonalData replays every scenario in testdata/scenarios with the
// production logging (JSON, masked) at debug level and scans every log line (docs/operations.md#logs):
// no string anywhere in a line — nested objects, arrays, JSON held in a string — holds an
// e-mail address or phone number, and every line about a row names its business unit.
// (Function, invocation id and step come from the function adapters: shared/app's
// TestServeRunsTheScenarioThroughTheFunctionRoutes checks them on the realistic scenario.)
func TestScenarioLogsCarryNoPersonalData(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../../testdata/scenarios/*.json")
	if err != nil || len(files) < 5 {
		t.Fatalf("scenarios: %v %v", files, err)
	}
	total := 0
	for _, f := range files {
		sc, err := replay.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var logs logsink.Buffer
		log := slog.New(logmask.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
		if _, err := replay.Run(context.Background(), sc, io.Discard, &replay.Options{Log: log}); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(logs.String(), "\n") {
			if l == "" {
				continue
			}
			total++
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Errorf("%s: log line is not JSON: %s", filepath.Base(f), l)
				continue
			}
			scanStrings(m, func(s string) {
				if leakedEmail.MatchString(s) || leakedPhone.MatchString(s) || logmask.String(s) != s {
					t.Errorf("%s: personal data in %q: %s", filepath.Base(f), s, l)
				}
			})
			if _, ok := m["schedulerKey"]; ok {
				if s, _ := m["businessUnitId"].(string); s == "" {
					t.Errorf("%s: a line about a row without its business unit: %s", filepath.Base(f), l)
				}
			}
		}
	}
	if total < 100 {
		t.Fatalf("only %d log lines in every scenario: the scan proves nothing", total)
	}
}

// scanStrings calls fn with every string in v: values of objects and elements of arrays, at
// any depth, and again for the strings of JSON held in a string.
func scanStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			scanStrings(e, fn)
		}
	case []any:
		for _, e := range x {
			scanStrings(e, fn)
		}
	case string:
		fn(x)
		var inner any
		if (strings.HasPrefix(x, "{") || strings.HasPrefix(x, "[")) && json.Unmarshal([]byte(x), &inner) == nil {
			scanStrings(inner, fn)
		}
	}
}
