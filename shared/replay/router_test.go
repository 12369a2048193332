package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/replay"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/shared/trace"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

func parseFile(t *testing.T, path string) *replay.Scenario {
	t.Helper()
	sc, err := replay.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// A scenario's events reach DomainEventHandler through the Functions router, as in serve:
// each malformed event of realistic.json is dead-lettered by the handler's dead-letter code -
// a record deadletter/DomainEventHandler/{eventId}-….json naming the function, the host's
// invocation id and the reason, and an AutomationJob trace row with outcome DeadLettered -
// and the "rejected" line carries the recorded reason. The record is keyed by the broker
// MessageId: events.Identity(source, id) for an event that parses (publish.Message), the
// bare id for one that does not.
func TestScenarioEventsAreDeadLetteredThroughTheRouter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out bytes.Buffer
	sc := parseFile(t, "../../testdata/scenarios/realistic.json")
	if _, err := replay.Run(context.Background(), sc, &out, &replay.Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	tr := sqlitetest.OpenTrace(t, dir)
	ctx := context.Background()
	rejected := parseLines(t, out.Bytes()).rejected
	if len(rejected) != 3 {
		t.Fatalf("rejected lines: %v", rejected)
	}
	for _, l := range rejected {
		id, _ := l["eventId"].(string)
		input, _ := l["input"].(float64)
		if ev, err := events.Parse(sc.Inputs[int(input)].Event); err == nil {
			id = events.Identity(ev.Source, ev.ID)
		}
		raw, err := tr.GetBlob(ctx, trace.DeadLetterBlobName(topology.DomainEventHandler, id))
		if err != nil {
			t.Fatalf("event %q: no dead-letter record: %v", id, err)
		}
		var rec map[string]any
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		if rec["function"] != topology.DomainEventHandler || rec["invocationId"] == "" || rec["reason"] != l["error"] || rec["messageId"] != id {
			t.Errorf("event %q: record %v, rejected line %v", id, rec, l)
		}
		jobs, err := tr.JobsByKey(ctx, "deadletter:"+topology.DomainEventHandler+":"+id)
		if err != nil || len(jobs) != 1 || jobs[0].Outcome != trace.OutcomeDeadLettered {
			t.Errorf("event %q: trace rows %+v %v", id, jobs, err)
		}
	}
}

// In fan-out mode DueWorkPoller publishes one due-work message per claimed row and
// DueWorkExecutor executes it, through the router and the in-process bus; every scenario
// gives the same output as the inline mode (its golden file).
func TestScenariosInFanOutModeMatchTheGoldenFiles(t *testing.T) {
	t.Parallel()
	for _, f := range scenarioFiles(t) {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var out, logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			if _, err := replay.Run(context.Background(), parseFile(t, f), &out, &replay.Options{FanOut: true, Log: log}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(logs.Bytes(), []byte(`"step":"fan-out"`)) {
				t.Fatal("DueWorkPoller never fanned out")
			}
			want, err := os.ReadFile(filepath.Join("../../testdata/golden", name[:len(name)-len(".json")]+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				gl, wl := bytes.Split(out.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
				for i := range min(len(gl), len(wl)) {
					if !bytes.Equal(gl[i], wl[i]) {
						t.Fatalf("line %d differs\n got %s\nwant %s", i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("%d lines, want %d", len(gl), len(wl))
			}
		})
	}
}
