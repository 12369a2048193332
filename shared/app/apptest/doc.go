// Package apptest opens the whole runtime for the HTTP adapters' tests, the one set-up they
// shared as copies: a fresh data directory, the configuration read from the settings given
// (besides AUTOMATION_DATA_DIR), a manual clock, discarded logs, and the runtime closed when
// the test ends; and the reminder fixtures the support tests share (Setting, Dispatch,
// Sources). It is a runtime built on the composition root (shared/app), imported by
// tests only (it imports "testing").
package apptest
