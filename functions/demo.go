package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/trace"
)

// The demo of `serve -demo`: one business unit and one reminder setting whose occurrence is
// on the expiry date at 00:00 local time, so an expiry dated today (in the unit's zone) is
// already due when it arrives and is sent at the next DueWorkPoller tick, at any hour.
const (
	demoBusinessUnit = "bu-demo"
	demoZone         = "Australia/Sydney"
	demoSettingGuid  = "d3e0d3e0-0000-4000-8000-000000000001"
	demoSentGuid     = "d3e0d3e0-0000-4000-8000-0000000000a1" // Amelia's police check: sent
	demoHeldGuid     = "d3e0d3e0-0000-4000-8000-0000000000b2" // Noah's: on support hold
)

// demoScenario is seeded like a -seed file (only what is not stored yet).
var demoScenario = fmt.Sprintf(`{"start":"2026-01-01T00:00:00Z","until":"2026-01-02T00:00:00Z","tick":"30s",
 "businessUnits":[{"id":%q,"name":"Demo (Sydney)","timeZone":%q}],
 "reminderSettings":[{"guid":%q,"businessUnitId":%q,"name":"Police check expiry (demo)",
   "sourceType":"PoliceVetting","triggerType":"DateBased","triggerKey":"expiresOn","offsetsDays":[0],
   "sendLocalTime":"00:00","template":"police-vetting-expiry","channels":["log"],
   "recipients":{"field":"staffEmail"},"isActive":true,"maxLatenessHours":48}],
 "inputs":[]}`, demoBusinessUnit, demoZone, demoSettingGuid, demoBusinessUnit)

// runDemo seeds the demo (before the local host runs, so no poll races it) and publishes
// today's two police checks of bu-demo through the event path (events ids carry the local
// date, so a restart on the same day is a duplicate and changes nothing):
//   - Noah's row is put on support hold as the poller does after a failed attempt (a
//     simulated "SMTP 421" with its diagnostics blob and Held trace row): it shows in the
//     console's rows (on hold) and is released with the support API, CLI or console, and
//     then sent at the next tick;
//   - Amelia's row stays Pending and due: sent at the next DueWorkPoller tick.
//
// A due row the demo did not create (a data directory shared with other work) is given back
// at once with a failed attempt recorded, never put on hold; -demo keeps its data in
// .data/demo unless AUTOMATION_DATA_DIR is set. Errors name the step.
func runDemo(ctx context.Context, rt *app.Runtime, log *slog.Logger) error {
	if err := seedScenario(ctx, rt, []byte(demoScenario), "demo"); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	loc, err := localtime.LoadZone(demoZone)
	if err != nil {
		return err
	}
	now := rt.Clock.Now()
	today := localtime.DateOf(now, loc).String()
	held, err := demoEvent(ctx, rt, "demo-held-"+today, demoHeldGuid, today, "Noah Smith", "noah.smith@example.test")
	if err != nil {
		return err
	}
	if held != nil {
		if err := demoHold(ctx, rt, *held, now); err != nil {
			return fmt.Errorf("putting the demo row on hold: %w", err)
		}
	}
	if _, err := demoEvent(ctx, rt, "demo-sent-"+today, demoSentGuid, today, "Amelia Nguyen", "amelia.nguyen@example.test"); err != nil {
		return err
	}
	amelia, err := demoRowOf(ctx, rt, demoSentGuid, today)
	if err != nil {
		return err
	}
	noah, err := demoRowOf(ctx, rt, demoHeldGuid, today)
	if err != nil {
		return err
	}
	log.Info(demoSummary(amelia, noah), "businessUnitId", demoBusinessUnit, "localDate", today)
	return nil
}

// demoRowOf returns the demo row of a police check expiring on date (nil when there is none).
func demoRowOf(ctx context.Context, rt *app.Runtime, guid, date string) (*automation.SchedulerRow, error) {
	rows, err := rt.Store.SchedulerListBySource(ctx, store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: guid, Limit: 10})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.ScheduledLocalDate == date {
			return &r, nil
		}
	}
	return nil, nil
}

// demoSummary is the demo's start-up line: what became of each of today's two reminders as
// the rows are now — a restart after Noah's release says it was released, never that it is
// still on hold.
func demoSummary(amelia, noah *automation.SchedulerRow) string {
	state := func(r *automation.SchedulerRow) string {
		switch {
		case r.Status == automation.StatusCompleted:
			return "was sent (row " + strconv.FormatInt(r.ID, 10) + " Completed)"
		case r.Status == automation.StatusPending || r.Status == automation.StatusProcessing:
			return "is due: sent at the next DueWorkPoller tick (serve's stdout)"
		}
		return "is " + string(r.Status)
	}
	a, n := "Amelia's reminder has no row today", "Noah's reminder has no row today"
	if amelia != nil {
		a = "Amelia's reminder " + state(amelia)
	}
	switch {
	case noah == nil:
	case noah.IsOnSupportHold:
		n = "Noah's is on support hold: see it in the console (/console, rows on hold) or `automation support find -bu bu-demo -on-hold`, and release it"
	default: // the demo always holds it: off hold, it was released
		n = "Noah's was released from its support hold and " + state(noah)
	}
	return "demo: two police checks expire today in bu-demo: " + a + "; " + n
}

// demoEvent dispatches one police-check event; it returns the row it created, or nil when
// the event was processed before (a restart the same day).
func demoEvent(ctx context.Context, rt *app.Runtime, id, guid, expires, name, email string) (*automation.SchedulerRow, error) {
	raw := fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"/demo","type":"PoliceVetting.Upserted","businessunitid":%q,
	  "entitytype":"PoliceVetting","entityguid":%q,"revision":%d,"data":{"expiresOn":%q,"staffName":%q,"staffEmail":%q,"isActive":true}}`,
		id, demoBusinessUnit, guid, rt.Clock.Now().Unix(), expires, name, email)
	ev, err := events.Parse([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", id, err)
	}
	ectx, out := events.WithOutcome(ctx)
	if err := rt.Events.Dispatch(ectx, ev); err != nil {
		return nil, fmt.Errorf("event %s: %w", id, err)
	}
	if out.Duplicate() {
		return nil, nil
	}
	rows, err := rt.Store.SchedulerListBySource(ctx, store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: guid, Limit: 10})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.Status == automation.StatusPending && r.ScheduledLocalDate == expires {
			return &r, nil
		}
	}
	return nil, fmt.Errorf("event %s: no Pending row for %s (is the demo setting active?)", id, expires)
}

// demoHold claims the due rows up to r's instant and puts r on support hold after one
// simulated failed attempt, exactly as the poller records a permanent failure: the row
// Failed and on hold, a diagnostics blob, a Held trace row.
func demoHold(ctx context.Context, rt *app.Runtime, r automation.SchedulerRow, now time.Time) error {
	claimed, err := rt.Store.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: r.ScheduledOn, Lease: time.Minute, Limit: store.MaxBatch})
	if err != nil {
		return err
	}
	for _, c := range claimed {
		if c.ID != r.ID {
			// Not the demo's: due again at once (the claim counts as one failed attempt).
			if err := rt.Store.SchedulerFail(ctx, store.SchedulerFailParams{ID: c.ID, Token: c.Version, Now: now,
				FailureReasonCode: automation.ReasonHandlerError, NextRetryOn: now}); err != nil {
				return err
			}
			continue
		}
		blob := "scheduler/" + c.Guid + "/demo.json"
		diag := `{"error":"smtp 421 4.3.2 service not available (a simulated outage: serve -demo)","attempt":1,"provider":"smtp.example.test"}`
		if err := rt.Trace.PutBlob(ctx, blob, []byte(diag)); err != nil {
			return err
		}
		if err := rt.Store.SchedulerFail(ctx, store.SchedulerFailParams{ID: c.ID, Token: c.Version, Now: now,
			FailureReasonCode: automation.ReasonHandlerError, Hold: true, TraceBlobName: blob}); err != nil {
			return err
		}
		return trace.WriteJobs(ctx, rt.Trace, []trace.JobRecord{{SchedulerKey: c.SchedulerKey, RowGuid: c.Guid, RowID: c.ID,
			BusinessUnitID: c.BusinessUnitID, AutomationType: string(c.AutomationType), Attempt: 1, Version: c.Version,
			Outcome: trace.OutcomeHeld, ReasonCode: string(automation.ReasonHandlerError),
			Message:   "smtp 421 service not available (simulated by serve -demo); on support hold",
			StartedOn: now, FinishedOn: now, TraceBlobName: blob}})
	}
	return fmt.Errorf("row %d was not claimed", r.ID)
}
