// Package fcmsim is the simulated Firebase Cloud Messaging server (docs/channels.md#simulators):
// a real HTTP server that speaks the two endpoints the push channel uses and checks the auth
// as Google does:
//
//   - POST /token: the OAuth 2.0 service-account grant (RFC 7523): grant_type
//     urn:ietf:params:oauth:grant-type:jwt-bearer and an RS256 JWT assertion, verified against
//     the public half of the key the server generated and handed out as a service-account
//     JSON file (ServiceAccountJSON); iss must be the account's client_email, aud the
//     token_uri, scope firebase.messaging (or cloud-platform), exp at most an hour after iat.
//     Answers {"access_token","token_type":"Bearer","expires_in"} or 400 {"error":"invalid_grant"}.
//   - POST /v1/projects/{project}/messages:send: requires "Authorization: Bearer <an issued,
//     unexpired token>" (401 UNAUTHENTICATED otherwise), the server's project (403
//     SENDER_ID_MISMATCH), exactly one target which must be a token, string data values,
//     no reserved data keys, a payload of at most 4096 bytes; answers {"name":
//     "projects/{p}/messages/{id}"} or a google.rpc.Status error with an FcmError errorCode.
//
// Fault switches (SetFaults, PUT /faults), for every send or per device token: slow,
// timeout (accepted, answered after the delay), rate-limit (429 QUOTA_EXCEEDED with
// Retry-After), unavailable (503 with Retry-After), internal (500), unregistered (404
// UNREGISTERED), invalid-token (400 INVALID_ARGUMENT on message.token) and lose-answer
// (accepted, connection closed unanswered). Accepted lists every accepted message, also
// those whose answer was late or lost, so a test can prove what reached a device.
package fcmsim
