// Package automation holds the domain vocabulary of the automation pipeline: the
// AutomationScheduler row, its statuses and reason codes, the SchedulerKey helper,
// InputHash, the ensure decision table and the injected Clock. It imports the standard
// library only (docs/conventions.md#import-direction).
//
// Life of a scheduler row (docs/architecture.md#the-scheduler-table, docs/seeds.md#seed-000):
//
//	          ensure (no row)
//	                │
//	                ▼
//	┌──────────► Pending ◄──────────────────────────┐
//	│               │ claim: lease + Version+1      │ stale rescue / retryable failure
//	│               ▼                               │ (RetryCount+1, NextRetryOn = backoff)
//	│          Processing ──────────────────────────┘
//	│          │    │    └──────────────┐
//	│ complete │    │ deactivate        │ attempts exhausted / permanent
//	│          ▼    ▼ (an outcome)      ▼
//	│   Completed  Deactivated       Failed + IsOnSupportHold
//	│               │                   │
//	└───────────────┴───────────────────┘ ensure with the same InputHash reactivates
//	                                      (Pending/Failed/Deactivated/Cancelled)
//
// Support (shared/support) may also release a hold, retry a row now, or cancel it
// (Cancelled, ReasonSupportCancelled): a support-cancelled row is not reactivated by ensure
// with the same InputHash, and a row that ended is re-sent as a new row under a
// support-retry key (SupportRetryKey), never by reopening it.
//
// Completed rows are never re-sent: ensure returns their coordinates. Every write bumps
// Version; the Version read by a claim is the token that later Complete/Fail/Deactivate
// calls must present, so a worker whose lease expired and was re-claimed cannot overwrite
// newer state (docs/architecture.md#claim).
package automation
