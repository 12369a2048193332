// Package templateapi holds the routes of the TemplatesApi function (docs/channels.md#templates):
// the notification templates the channels render, managed over HTTP as thin adapters over
// delivery.Templates on shared/httpapi. Every route is scoped to the businessUnitId it names
// (outside the caller's scope, or not stored: 404, nothing written).
//
//	GET  /api/templates/{key}?businessUnitId=bu-1
//	     → 200 Template: the unit's own latest version (override: true, ETag its version),
//	       else the platform default's (override: false, no ETag); 404 when neither exists
//	PUT  /api/templates/{key}?businessUnitId=bu-1   X-Automation-Operator: jane
//	     {"subject":"…","text":"…","html":"…"}
//	     → 201 the unit's first version (no If-Match: there must be none yet, else 412),
//	       200 the next version (If-Match: "<the unit's latest version>", else 412);
//	       422 naming the part that does not parse; 400 without an operator (the audit)
//	POST /api/templates/{key}/preview?businessUnitId=bu-1[&channel=sms]   {"payload":{…}}
//	     → 200 {"subject","text","html","version"[,"sms":{"encoding","units","segments"}]}:
//	       the latest version rendered with the
//	       payload as a delivery's render data; 422 naming the missing field
//	       ("payload.source.staffName") when the payload lacks one
//
// Each version is kept with the operator who saved it and when (the audit), and a saved
// version never changes.
package templateapi
