// Package attribute is the attribute engine (docs/attributes.md): the "dumb executor" of the
// counter instructions the event gateway puts in the tracking topic's fat payload. It keeps
// dynamic attributes of customers, cards and items (counters, streaks, flags, timers, lists)
// and emits a trigger event to the events topic only when a threshold is crossed, so the
// rule/points engine sees one event per crossing instead of every raw event.
//
// Pure operations (ops.go): Apply(old state, instruction, event time, rules) -> (new state,
// crossings), one per row of seed 003's operation table, with calendar periods in the
// business unit's (or the instruction's) zone; ApplyEntity runs one entity's instructions and
// spends caps. Service.Handle runs one tracking message in one transaction (store
// AttributeApply) under optimistic Version with a bounded retry; Service.HandleBatch runs a
// batch of them in one transaction (store AttributeApplyBatch), in order and each as Handle
// would, and applies them one at a time when that transaction fails (poison isolation);
// Flusher folds hot counters' deltas; Read applies the period rule for readers.
//
// State machine of an event per entity: unseen -> applied (its id recorded with the
// entity's writes, deltas and trigger outbox rows in one transaction) -> every later
// delivery is a Duplicate no-op. A permanent error (bad payload, a value of the wrong type)
// leaves the entity unseen and the message is dead-lettered. A hot counter's increment:
// delta appended -> folded into the counter row by a flush batch (the delta deleted in the
// same transaction).
//
// The console's overview counts the trigger events (Service.Triggers,
// metricscount.FlowTrigger) after their event's commit, so a rolled-back batch or a
// duplicate counts none.
package attribute
