// Package preference holds recipient preferences and quiet hours, and the one decision the
// dispatcher asks before it sends a delivery (docs/channels.md#recipient-preferences):
//
//	delivery ─► category (payload "category", else the template's category, else the default)
//	    │
//	    ├─ transactional category ───────────────────────────────► send
//	    ├─ the recipient opted out of (channel, category) ───────► Skipped, with the reason
//	    ├─ now inside the quiet-hours window ────────────────────► wait until the window ends
//	    │    (the recipient's window, else the unit's; the          (Queued, NextAttemptOn =
//	    │     recipient's zone, else the window's, else the unit's)  the end, UTC)
//	    └─ otherwise ────────────────────────────────────────────► send
//
// Categories are a known set (Registry): a preference naming a category that does not
// exist is refused, naming the member. A transactional category (a password expiry, seed
// 001's UC-11) is not subject to marketing opt-out and passes quiet hours; an opt-out of it
// is refused rather than stored and ignored.
//
// A preference's recipient id is the delivery's recipient address as the channel uses it
// (a customer id for push, an e-mail address, an E.164 number), trimmed and lower-cased:
// the inbound SMS STOP names a number, a one-click unsubscribe link an e-mail address. No
// row means opted in.
//
// Unsubscribe tokens (UnsubscribeToken) are HMAC-SHA256 over the unit, recipient, channel
// and category, keyed with a server secret: the one-click link (RFC 8058) carries no other
// credential, so a token opts out only what it names.
package preference
