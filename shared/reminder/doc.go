// Package reminder turns domain events into reminder occurrences in AutomationScheduler
// (docs/architecture.md#reminders) and revalidates them at due time (docs/architecture.md#revalidation).
//
// Date-based reminders (docs/architecture.md#date-based-reminders): for each offset d of a setting, the occurrence's local date
// is targetDate − d (calendar days) at the setting's local send time in the business
// unit's zone, converted to UTC with the DST product rule (localtime.Resolve). Annual
// settings target the next anniversary and ensure the following year's occurrence when one
// completes (29 February → 28 February in common years).
//
// Threshold reminders (docs/architecture.md#threshold-reminders, threshold.go): a metric computed from the event's aggregate is
// compared with one or more levels; a reached level ensures a row under the key scope of the
// setting's firing policy, a level no longer reached deactivates pending rows
// (ConditionNoLongerMet).
//
// Settings changes (docs/architecture.md#settings-changes, settings.go), the immediate-notification provider (immediate.go),
// execution-time revalidation with recipients resolved at due time (handler.go, docs/architecture.md#revalidation) and
// bounded reconciliation (reconcile.go, docs/architecture.md#reconciliation) complete the lifecycle.
//
// # Maintenance services
//
// The Reconciliation timer function runs four maintenance services, one per file, in one
// invocation (Reconciler.RunOnce): SettingsPropagator (settings_propagator.go), TZDataResyncer
// (tzdata_resyncer.go), SourceSweeper (source_sweeper.go) and IdempotencyPurger
// (idempotency_purger.go). Each has a Config whose zero fields take documented defaults,
// Config.Validate, an injected Clock, and runOnce, which runs one bounded pass and returns
// its counts; tests call runOnce directly and watch each saved batch through testSignals.
// The first three share the run's batch budget in that order; the purge is bounded on its
// own. A service that fails does not hold up the others: the run reports every service
// (ServiceReport) and returns the failures joined.
//
// Every sweep keeps its position in a store.ReconcileState row under its sweep key
// ("setting:{guid}", "source:{bu}:{type}", "tzdata"; "source-rotation" is the source
// sweeps' round-robin pointer). A pass moves through these states:
//
//	owed: Generation > DoneGeneration (a setting), no Marker of this tzdata version (tzdata),
//	      or a source pair's next pass (it reads the changes since WatermarkOn)
//	  │
//	  ├─ batch read and applied, page full  → save Cursor (+ PassHighOn): still owed
//	  ├─ batch read and applied, page short → save DoneGeneration = Generation, Cursor = "",
//	  │                                       WatermarkOn = PassHighOn or Marker = version: done
//	  ├─ batch failed (read or apply)       → save nothing: the next run resumes at Cursor
//	  └─ save refused (Version moved on)    → stop without error: the newer pass owns it
//
// The watermark and the cursor advance only after a successful batch: a batch is read,
// applied (each source synced like an event, each row re-timed or deactivated) and only then
// is the position saved, so a failure part-way repeats at most that batch, whose writes are
// idempotent (the same keys, the same InputHash). Saves are guarded by the state's Version: a
// newer request (a setting changed again) or another runner wins, and this pass stops
// without error (ignoreLost). The Idempotency-Key purge keeps no position: a record it did not
// delete is still older than the retention at the next run.
package reminder
