// Package trace records what happened to scheduler rows: a thin AutomationJob trace row per
// attempt (Azure Table Storage in production, never scanned for work) and, for failures and
// holds, a diagnostics blob named by the row's TraceBlobName (Blob Storage in production).
// The local implementation (trace/localtrace) keeps both on disk; the Azure one lives in
// the azure package. Both run the same conformance suite (trace/tracetest).
package trace
