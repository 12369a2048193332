// Package metricscount keeps a process's counts of one flow of the console's overview
// (attribute triggers, report runs; docs/console.md#overview) in memory until the metrics
// sampler (support.Sampler, a CountSource) persists them to the MetricsCount table once a
// minute, so the overview's figures survive restarts and add up across instances, while the
// counted path itself writes nothing to SQL.
//
// State of a count: added (pending) → drained by the sampler, stamped with its minute →
// added to MetricsCount (persisted) or, when that write fails, restored (pending again, the
// next drain returns it). So a count is neither lost (short of the process dying between
// two flushes; the runtime flushes on Close) nor added twice.
//
// Bounded: at most MaxKeys (business unit, label, outcome) keys are pending; a key beyond
// that counts in the ("", "", outcome) overflow bucket, so made-up units or labels cannot
// grow the map. A unit or label wider than its MetricsCount column counts under "" (unknown),
// so no pending row is one the store refuses at every flush.
package metricscount
