// Package support holds the rules of the support API (docs/architecture.md#support-actions, docs/operations.md#support-api): finding
// scheduler rows, explaining why a source's reminders did or did not go out, the audited,
// Version-guarded operator actions (release a hold, retry now, cancel, run now, paced bulk release)
// and the pipeline's health figures, with their history for the console (Sampler, on the
// OutboxRelay timer: idle → sampling → flushing counts → purging → idle, at most once a
// minute; MetricsHistory), and the persisted counters it flushes (the gateway's ingest counts,
// the attribute engine's triggers and the report runs, into MetricsCount; IngestThroughput,
// TriggerThroughput and ReportThroughput read them). Throughput also gives the deliveries'
// totals per channel (ByChannel) from the same reading as its minutes.
// The HTTP handlers (shared/api/supportapi) only decode and
// encode; everything a caller may or may not do is decided here.
//
// Scope: every read and action is limited to the business units the caller may see. A row,
// source or business unit outside them answers automation.CodeNotFound, exactly like one that
// does not exist, so ids cannot be probed.
//
// Actions and the statuses they accept (anything else is CodeConflict, 409):
//
//	release    on support hold (any status)    hold cleared; Failed → Pending; due at once
//	retry      Failed; Pending in backoff/hold  due at once (hold and backoff cleared)
//	           Completed, Deactivated,          a new support-retry row (automation.SupportRetryKey)
//	           Cancelled (reminders only)       due at once; the original row keeps its state
//	                                            (an ended report run: the report API's retry)
//	cancel     Pending, Failed, Deactivated     Cancelled (SupportCancelled); sticks through ensure
//	           (not a report subscription's pending next scheduled run: pause the subscription)
//	run now    Pending, not on hold, not yet    due at once (ScheduledOn = now; key and local
//	           due (not a subscription's next    intent kept, revalidated when it runs)
//	           scheduled run)
//	releases   rows on hold matching a filter   paced: batches due at most RatePerMinute apart
//
// Every action needs the operator's name and a reason, is guarded by the Version the
// operator read (If-Match: CodePreconditionFailed when it moved on), writes one SupportAudit
// record per row in the same transaction and one AutomationJob trace row per row after it.
package support
