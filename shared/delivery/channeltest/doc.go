// Package channeltest is the one conformance suite for delivery.Channel. Every channel (log,
// webhook, email over SMTP, and every channel that lands later) runs it through a Harness
// that pairs the channel with a provider it can observe:
//
//	func TestWebhookConformance(t *testing.T) {
//		channeltest.Run(t, func(t channeltest.TB) channeltest.Harness { return newWebhookHarness(t) })
//	}
//
// The contract checked here, per case:
//   - Declared: the harness declares every capability: where the idempotency key travels or
//     why there is none, and a channel whose Traits say Idempotent must carry one.
//   - Sent: a message to an accepting recipient returns nil and a non-empty provider
//     reference; the provider got it once, with its delivery key, subject and text.
//   - InvalidRecipient: ValidateRecipient rejects the harness's invalid address, and Send to
//     it is a permanent failure (automation.IntentPermanent) that reaches no provider.
//   - NeedsContent: when the channel's Traits say NeedsContent, a message without rendered
//     content is a permanent failure that reaches no provider.
//   - PermanentFailure: a provider that refuses the message for good (a 4xx answer, an SMTP
//     5xx) is automation.IntentPermanent.
//   - TimeoutIsUnknown: a provider that applies the message but does not answer within the
//     channel's timeout is automation.IntentUnknown (resending could deliver twice), and the
//     provider did get it.
//   - IdempotencyKey: the same delivery key sent twice carries the same idempotency key,
//     which contains the delivery key (or is the harness's declared derivation of it, for
//     a provider that fixes the key's form); another delivery key carries another one.
//   - Attachments: a channel whose Traits say Attachments sends the file (name, content type
//     and bytes arrive as sent); a channel that does not refuses a message with one as a
//     permanent failure instead of dropping the file silently.
//
// A case that does not apply to a channel is skipped with the reason its harness declares
// (the log channel cannot fail on the provider side), so `go test -v` shows what a channel
// was not checked for.
//
// The suite takes a TB, not *testing.T, so that its own tests can run every case against
// deliberately broken channels with a recorder and prove that each case can fail.
package channeltest
