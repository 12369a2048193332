// Package replay runs a scenario file on a simulated clock (docs/architecture.md#replay): the same
// pipeline as production - events → scheduler rows → due-work poller → outbox → dispatch -
// on the embedded runtime, with the clock jumping to the next instant where something can
// happen on the tick grid (start + k·tick). Same file, same output.
package replay
