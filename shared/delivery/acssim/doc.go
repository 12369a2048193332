// Package acssim is the simulated Azure Communication Services SMS endpoint
// (docs/channels.md#simulators): a real HTTP server for POST /sms?api-version=2021-03-07 that
// checks the access-key signature as ACS does and deduplicates by repeatabilityRequestId.
//
// Auth, per request: x-ms-date within 15 minutes of the server's clock, x-ms-content-sha256
// equal to base64(SHA-256(body)), and Authorization "HMAC-SHA256
// SignedHeaders=x-ms-date;host;x-ms-content-sha256&Signature=…" equal to HMAC-SHA256 with the
// resource's access key over METHOD\npath?query\ndate;host;hash. Anything else is 401 and
// sends nothing. The check is written here, apart from the channel's signer, so a signer
// defect is not mirrored.
//
// Repeatability: a recipient with a repeatabilityRequestId (a GUID) and a
// repeatabilityFirstSent (RFC 1123) is sent once per id; the same id again answers the
// first result with repeatabilityResult "accepted" and sends nothing; the same id with
// another number or text is "rejected"; a first-sent older than the window (default 24 h)
// is "rejected" too.
//
// Fault switches (SetFaults, PUT /faults): slow, timeout (sent, answered after the delay),
// rate-limit (429 with Retry-After, nothing sent), internal (500, nothing sent),
// lose-answer (sent, connection closed unanswered). Numbers in Config.Refused answer
// per-recipient 400 (successful false). Sent lists every message sent once, Requests
// every request as it came (repeats included).
package acssim
