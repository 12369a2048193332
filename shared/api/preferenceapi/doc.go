// Package preferenceapi holds the routes of the PreferencesApi function and of the
// Unsubscribe function (docs/channels.md#recipient-preferences): thin adapters over
// shared/preference on shared/httpapi (problem details, strict query, business-unit scope:
// a unit the caller may not see, or one that does not exist, answers 404 and nothing is
// written).
//
//	GET    /api/preferences/recipients/{recipientId}?businessUnitId=bu-1
//	       → 200 View: the stored preferences (no row: opted in), the recipient's quiet hours, the categories
//	PUT    /api/preferences/recipients/{recipientId}?businessUnitId=bu-1   X-Automation-Operator
//	       {"preferences":[{"channel":"sms","category":"marketing","optedIn":false}],"quietHours":{…}}
//	       → 200 View; 422 naming each member (an unknown channel or category, an opt-out of a
//	         transactional category, equal window ends, a zone that does not exist)
//	GET    /api/preferences/quiet-hours?businessUnitId=bu-1 → 200 the unit's window; 404 none
//	PUT    /api/preferences/quiet-hours?businessUnitId=bu-1   X-Automation-Operator
//	       {"start":"21:00","end":"08:00","timeZoneId":"Australia/Sydney"} → 200; 422 naming the member
//	DELETE /api/preferences/quiet-hours?businessUnitId=bu-1   X-Automation-Operator → 204; 404 none
//	POST   /api/preferences/sms-inbound?businessUnitId=bu-1
//	       Event Grid events (Event Grid schema): the subscription validation handshake is
//	       answered {"validationResponse": code}; Microsoft.Communication.SMSReceived whose
//	       text is an opt-out keyword (STOP, …) opts the sender's number out of SMS marketing.
//	       Each event counts against the webhook credential's ingest quota (Deps.Charge):
//	       over it the whole delivery is 429 with Retry-After, nothing written, and Event
//	       Grid delivers it again later.
//	GET    /api/unsubscribe?token=… → 200 a page with the one-click form (changes nothing)
//	POST   /api/unsubscribe?token=…  List-Unsubscribe=One-Click (RFC 8058)
//	       → 200, the recipient opted out of what the signed token names (idempotent);
//	         404 for a token that is not ours. No other credential: the Unsubscribe
//	         function is anonymous, like the console.
package preferenceapi
