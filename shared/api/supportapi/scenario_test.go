package supportapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/support"
)

var addressRE = regexp.MustCompile(`[A-Za-z0-9._%+-]{2,}@[A-Za-z0-9.-]+\.[a-z]{2,}`)

// TestExplainEveryRowKindOfTheScenario replays testdata/scenarios/realistic.json on the
// embedded runtime, reopens its data with the Functions router, and asks explain for every
// source the scenario names. Every row of every accepted source must be explained with an
// outcome that matches its status and reason; the rejected sources answer 404; and no answer
// carries an unmasked e-mail address.
func TestExplainEveryRowKindOfTheScenario(t *testing.T) {
	t.Parallel()
	e, sc := scenarioEnv(t, "realistic.json")
	rt := e.rt

	type source struct{ typ, guid string }
	var sources []source
	seen := map[source]bool{}
	for _, in := range sc.Inputs {
		var ev struct {
			EntityType string `json:"entitytype"`
			EntityGuid string `json:"entityguid"`
		}
		_ = json.Unmarshal(in.Event, &ev)
		s := source{ev.EntityType, ev.EntityGuid}
		if s.guid != "" && !seen[s] {
			seen[s] = true
			sources = append(sources, s)
		}
	}
	explained := map[string]*support.Explanation{}
	kinds := map[string]bool{}
	rejected := 0
	for _, s := range sources {
		rec := httptest.NewRecorder()
		rt.Functions.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/support/explain?sourceType="+url.QueryEscape(s.typ)+"&sourceGuid="+url.QueryEscape(s.guid), nil))
		if leak := addressRE.FindString(rec.Body.String()); leak != "" {
			t.Errorf("%s/%s: unmasked address %q in the answer", s.typ, s.guid, leak)
		}
		rows, err := rt.Store.SchedulerListBySource(context.Background(), store.SchedulerListParams{SourceEntityType: s.typ, SourceEntityGuid: s.guid, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			// Rejected by the pipeline (unknown business unit, impossible date): never stored.
			if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "dead-lettered") {
				t.Errorf("%s/%s (rejected): %d %s", s.typ, s.guid, rec.Code, rec.Body.String())
			}
			rejected++
			continue
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("%s/%s: %d %s", s.typ, s.guid, rec.Code, rec.Body.String())
		}
		var x support.Explanation
		if err := json.Unmarshal(rec.Body.Bytes(), &x); err != nil {
			t.Fatal(err)
		}
		explained[s.guid] = &x
		byID := map[int64]support.Occurrence{}
		for _, set := range x.Settings {
			for _, o := range set.Occurrences {
				if o.ScheduledLocal == "" || o.ScheduledOn.IsZero() || o.LocalDate == "" || o.LocalTime == "" || o.Explanation == "" {
					t.Errorf("%s: occurrence without local/UTC time or explanation: %+v", s.guid, o)
				}
				if o.Row != nil {
					byID[o.Row.ID] = o
				}
			}
		}
		for _, r := range rows {
			o, ok := byID[r.ID]
			if !ok {
				t.Errorf("%s: row %d (%s %s) is not explained", s.guid, r.ID, r.Status, r.ReasonCode)
				continue
			}
			want := map[automation.Status]string{automation.StatusCompleted: "Sent", automation.StatusDeactivated: "NotSent", automation.StatusPending: "Waiting"}[r.Status]
			if o.Outcome != want || o.ReasonCode != string(r.ReasonCode) {
				t.Errorf("%s: row %d %s/%s explained as %s/%s: %s", s.guid, r.ID, r.Status, r.ReasonCode, o.Outcome, o.ReasonCode, o.Explanation)
			}
			kinds[string(r.Status)+"/"+string(r.ReasonCode)] = true
		}
	}
	var gotKinds []string
	for k := range kinds {
		gotKinds = append(gotKinds, k)
	}
	sort.Strings(gotKinds)
	if want := "Completed/ Deactivated/MissedWindow Deactivated/SourceNoLongerValid Deactivated/Superseded Pending/"; strings.Join(gotKinds, " ") != want {
		t.Fatalf("row kinds explained: %v, want %s", gotKinds, want)
	}

	// The specific answers an operator looks for.
	must := func(guid string, check func(x *support.Explanation) bool, what string) {
		t.Helper()
		x := explained[guid]
		if x == nil || !check(x) {
			b, _ := json.MarshalIndent(x, "", " ")
			t.Errorf("%s: %s\n%s", guid, what, b)
		}
	}
	occ := func(x *support.Explanation) []support.Occurrence {
		var out []support.Occurrence
		for _, s := range x.Settings {
			out = append(out, s.Occurrences...)
		}
		return out
	}
	has := func(x *support.Explanation, outcome, reason, text string) bool {
		for _, o := range occ(x) {
			if o.Outcome == outcome && o.ReasonCode == reason && strings.Contains(o.Explanation, text) {
				return true
			}
		}
		return false
	}
	// Out-of-order revision: evt-pv-4 (revision 2) after evt-pv-5 (revision 3).
	must("c7e1a9b3-5d2f-4c8a-b6e4-0f9d3a7c1e5b", func(x *support.Explanation) bool {
		return x.IgnoredEvent != nil && x.IgnoredEvent.EventID == "evt-pv-4" && x.IgnoredEvent.StoredRevision == 3 &&
			has(x, "NotSent", "Superseded", "changed from 2026-12-15 to 2027-03-20")
	}, "older revision ignored, date moved")
	// Missed window: the 30-day reminder of a check expiring 9 days after the event.
	must("e2a4c6e8-0b1d-4f3a-9c5e-7a9b1d3f5a7c", func(x *support.Explanation) bool {
		return has(x, "NotSent", "MissedWindow", "late rule") && has(x, "Sent", "", "Sent")
	}, "missed window")
	// Deleted source.
	must("d6f8b0d2-4e6a-4c8e-8a0c-2e4a6c8e0a2c", func(x *support.Explanation) bool {
		return x.Source.State == "deleted" && !x.Settings[0].Applies && strings.Contains(x.Settings[0].Why, "deleted") &&
			has(x, "NotSent", "SourceNoLongerValid", "deleted")
	}, "deleted source")
	// Inactive source.
	must("2c3d4e5f-6a7b-4c8d-8e9f-a0b1c2d3e4f5", func(x *support.Explanation) bool {
		return x.Source.State == "inactive" && strings.Contains(x.Settings[0].Why, "inactive") && has(x, "NotSent", "SourceNoLongerValid", "inactive")
	}, "inactive source")
	// Date removed (invoice paid): no date, no reminder.
	must("5e7a9c1e-3a5c-4e7a-9c1e-1a3c5e7a9c1e", func(x *support.Explanation) bool {
		return strings.Contains(x.Settings[0].Why, "data.dueDate is empty") && has(x, "NotSent", "Superseded", "removed")
	}, "date removed")
	// Annual chain: this year's sent, next year's waiting (29 February → 28 February in 2027).
	must("1b2c3d4e-5f6a-4b7c-9d8e-9fa0b1c2d3e4", func(x *support.Explanation) bool {
		o := occ(x)
		return len(o) == 2 && o[0].Outcome == "Sent" && o[0].LocalDate == "2027-02-28" && o[1].Outcome == "Waiting" && o[1].Wanted && o[1].TargetDate == "2028-02-29"
	}, "annual chain")
	// DST gap: 02:30 on Sydney's DST start day is sent at 03:30.
	must("a9c1e3a5-7b9d-4f1b-8d3f-5b7d9f1b3d5f", func(x *support.Explanation) bool {
		for _, o := range occ(x) {
			if o.LocalDate == "2026-10-04" && strings.Contains(o.DST, "does not exist") && o.ScheduledLocal == "2026-10-04T03:30:00+11:00" {
				return true
			}
		}
		return false
	}, "DST gap note")
	if len(explained) != 13 || rejected != 2 {
		t.Fatalf("explained %d sources and %d rejected ones, want the scenario's 13 accepted and 2 rejected (the third has no entity guid)", len(explained), rejected)
	}
}
