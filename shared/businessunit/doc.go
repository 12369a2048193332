// Package businessunit holds the business units every domain works in (docs/architecture.md#inputs):
// a unit's input and its validation (id, display name, IANA or Windows time zone, recipient
// role lists), the admin service behind the management API (create, read, list, replace
// under If-Match, each in the caller's scope), the scoped read the domains share, and the
// unit's loaded time zone (Zone). The records themselves are the store's
// (store.BusinessUnit, store.BusinessUnitRecord).
//
// What a new time zone does to a domain's rows is that domain's rule: Admin.Update calls
// the rezone function its caller passes before the new zone is stored (the reminder settings'
// propagation, reminder.Admin.UpdateBusinessUnit).
package businessunit
