// Package logmask keeps personal data out of logs (docs/operations.md#logs): a slog.Handler
// that masks e-mail addresses and phone numbers in the message and in every string
// attribute (groups included) before the wrapped handler sees them.
package logmask
