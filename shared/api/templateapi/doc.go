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
//	PUT  body of the other kinds (docs/channels.md#template-kinds):
//	     {"kind":"push","subject":"title","text":"body","data":{"screen":"{{.screen}}"}}
//	     {"kind":"sms","text":"…"}
//	     {"kind":"whatsapp","whatsApp":{"name":"points_earned","language":"vi","parameters":["{{.name}}"]}}
//	     → 422 naming the member a kind does not have or that does not parse ("data.gcm.x",
//	       "whatsApp.parameters[1]", "subject" of an sms template)
//	DELETE /api/templates/{key}?businessUnitId=bu-1   If-Match: "<live version>"   X-Automation-Operator: jane
//	     → 204: a tombstone is the unit's next version (who and when kept); the unit renders
//	       the default again; 404 when the unit has no live version of its own; 412 stale
//	POST /api/templates/{key}/preview?businessUnitId=bu-1[&channel=sms]   {"payload":{…}}
//	     → 200 {"subject","text","html","version"[,"sms":{"encoding","units","segments"}]}:
//	       the latest version rendered with the
//	       payload as a delivery's render data; 422 naming the missing field
//	       ("payload.source.staffName") when the payload lacks one
//
// Each version is kept with the operator who saved it and when (the audit), and a saved
// version never changes.
package templateapi
