// Package logctx carries log attributes in a context.Context so that every line logged
// about a row says which row, event, function invocation and step it belongs to
// (docs/operations.md#logs: schedulerKey, sourceEventId, businessUnitId, function, invocation id,
// step, error code), without threading loggers through every call. Inside a traced
// operation Handler adds the OpenTelemetry trace_id and span_id too. The function adapters
// put the function name and invocation id in the context, the services add the row or event
// and the step, and Handler adds them to each record logged with that context
// (slog's *Context methods). Standard library and the OpenTelemetry trace API only.
package logctx
