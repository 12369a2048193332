// Package report runs recurring report subscriptions on the automation pipeline
// (docs/architecture.md#report-subscriptions, docs/seeds.md#seed-004): the same AutomationScheduler rows, claim, lease, backoff,
// delivery hand-off and send claim as reminders, plus a one-owner guard so an old scheduler
// and ours can run side by side during the cutover without a report ever going out twice.
//
// # Runs and keys
//
// Every run is a scheduler row (AutomationType ReportSubscription, SourceEntityType
// ReportSubscription, SourceEntityGuid = the subscription's Guid) with one of three keys:
//
//	report-subscription:{guid}:scheduled:{scheduledOn UTC}     TriggerType ScheduledRun
//	report-subscription:{guid}:manual:{manualRunGuid}          TriggerType ManualRun (run-now)
//	report-subscription:{guid}:support-retry:{retryGuid}       TriggerType ManualRun (support)
//
// and a ReportRun registry row: its StorageRunKeyHash ("r" + 24 hex digits of the key's
// sha256), the period it reports on, who asked and why. The hash names every artifact: the
// file in Blob (reports/{hash}/{first 16 hex digits of the file's sha256}/{file}), the
// support URLs, the HTTP source's Idempotency-Key.
//
// # Schedules
//
// A subscription's recurrence is an RFC 5545 RRULE evaluated on the business unit's local
// wall clock (rrule-go on a DST-free floating clock); each local occurrence becomes a UTC
// instant through localtime.Resolve, the DST product rule of docs/architecture.md#dst-product-rule. The iteration starts on
// the rule's period grid just before the instant asked about (DTSTART + k×INTERVAL periods,
// with the parts DTSTART supplies written down), so its cost does not grow with the age of
// DTSTART; dtStart is 1970 or later and COUNT at most 10,000 (a COUNT is counted from
// DTSTART). A rule that never occurs after now, or more often than the minimum interval
// (default 1 h), is refused, as are repeated rule parts and a COUNT or INTERVAL that is not a
// positive integer. Only the next
// scheduled run exists: create/update/resume ensure it (and deactivate other pending
// scheduled rows: Superseded), pause/delete deactivate pending runs (completed runs stay),
// and executing a scheduled run ensures the following one - at once, and again as a
// follow-up of its completion.
//
// # Execution (Handler)
//
//	reload subscription ── deleted/paused ───────────────▶ Deactivated
//	        │ not an occurrence any more ─────────────────▶ Deactivated Superseded
//	        ▼
//	rollout mode keeps the run with the old scheduler ───▶ Deactivated ShadowOnly (no ownership)
//	        ▼
//	acquire ReportRunOwnership(ownership key, AutomationScheduler)
//	        │ Conflict (the old scheduler owns it) ───────▶ Failed, support hold, no delivery
//	        │ own DeliveryCreated (a retry) ──────────────▶ complete with the recorded coordinates
//	        ▼ Owned
//	render → Blob → DeliveryCreated(coordinates) → complete: NotificationJob + outbox rows
//
// # One-owner guard
//
// ReportRunOwnership(SchedulerKey, OwnerType, OwnerVersion, Status, CoordinatesJson) is
// acquired before any delivery artifact exists: no row → Owned by the caller; Cancelled →
// taken over (OwnerVersion+1 fences the previous owner); owned by the caller → reused with
// its coordinates; owned by the other → Conflict, nothing written. DeliveryCreated is final.
// The old scheduler takes part over HTTP (reportapi): acquire, check, delivery-created,
// release.
//
// # Rollout
//
// Modes per business unit or subscription (the subscription's wins; none: Shadow): Shadow,
// RunNowAllowlist, ScheduledAllowlist, Cutover - see Mode. Removing a mode is the rollback:
// ownership we hold without a delivery is cancelled so the old scheduler can take it.
//
// The console's overview counts report runs (Handler.Runs, metricscount.FlowReport):
// delivered once per run (when an execution records DeliveryCreated), failed on a permanent
// error, skipped on a deactivation.
package report
