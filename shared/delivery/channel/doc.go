// Package channel holds the real delivery channels behind delivery.Channel (see
// docs/architecture.md#dispatch): an HTTPS webhook with an HMAC-SHA256 signature and the delivery key as
// Idempotency-Key, and SMTP e-mail through github.com/wneessen/go-mail. Each validates its
// recipient addresses and classifies failures as permanent, unknown (the provider may have
// acted) or transient (not delivered, retry).
package channel
