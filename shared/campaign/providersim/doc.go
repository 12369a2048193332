// Package providersim is the local simulated action provider (docs/campaigns.md#simulated-provider):
// a real HTTP server speaking the HTTP action provider's protocol (POST /actions with an
// Idempotency-Key, GET /actions/{key}) for tests, the replay and demos, with fault switches
// (PUT /faults): answer slowly, time out after applying, fail without applying, lose the
// answer after applying, or be flaky (a deterministic share of calls fails or loses its
// answer); independently of the mode, a deterministic share of lookups fails (503) or loses
// its answer (the connection closes unanswered, a timeout to the caller). It counts every
// effect per key, so a test can prove an action applied once.
//
// State of one key: absent → applied (with a reference "sim-{n}"). With Dedupe a second
// call for an applied key applies nothing and answers the same reference; without it every
// call applies again (a provider that does not deduplicate, to prove the worker never calls
// twice).
package providersim
