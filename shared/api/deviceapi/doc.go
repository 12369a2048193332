// Package deviceapi holds the routes of the DevicesApi function (docs/channels.md#device-registry):
// the push channel's device registry, as thin adapters over store.PushDeviceStore on
// shared/httpapi (problem details, strict query, business-unit scope: a business unit the
// caller may not see, or one that does not exist, answers 404 and nothing is written).
//
//	PUT    /api/devices/{customerId}/{token}?businessUnitId=bu-1   {"platform":"android|ios|web","app":"…"}
//	       → 201 Device (a new or re-activated registration), 200 Device (registered already:
//	         nothing changed, or the platform or app updated); 409 when the customer has
//	         store.MaxPushDevicesPerCustomer active devices; 422 naming the member for a bad
//	         customer id, token (over 4000 bytes, or not FCM's alphabet), platform or app
//	DELETE /api/devices/{customerId}/{token}?businessUnitId=bu-1
//	       → 204 (retired with reason "deleted"); 404 when no such active device
//	GET    /api/devices/{customerId}?businessUnitId=bu-1
//	       → 200 {"items":[Device…]} the active devices, oldest registration first
//
// A token is one device: registering it for another customer of the unit moves it there.
package deviceapi
