// Package report runs recurring report subscriptions on the automation pipeline
// (ARCHITECTURE §7, seed 004).
package report
