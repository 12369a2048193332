package store

import (
	"context"
	"time"
)

// Push device bounds (docs/channels.md#device-registry).
const (
	// MaxPushDevicesPerCustomer bounds a customer's active devices in one business unit;
	// registering one more is refused (ErrConflict), nothing is evicted silently.
	MaxPushDevicesPerCustomer = 10
	// MaxPushTokenBytes bounds an FCM registration token (FCM's tokens are about 160
	// characters today; 4000 leaves room and fits SQL Server's nvarchar(4000) column; the key is its hash).
	MaxPushTokenBytes = 4000
)

// PushPlatform is the kind of device a token belongs to.
type PushPlatform string

// Push platforms.
const (
	PlatformAndroid PushPlatform = "android"
	PlatformIOS     PushPlatform = "ios"
	PlatformWeb     PushPlatform = "web"
)

// Valid reports whether p is a known platform.
func (p PushPlatform) Valid() bool {
	return p == PlatformAndroid || p == PlatformIOS || p == PlatformWeb
}

// PushDevice is one registered FCM token of one customer (the PushDevice table).
type PushDevice struct {
	BusinessUnitID string
	CustomerID     string
	Token          string
	Platform       PushPlatform
	App            string     // the app's id (e.g. "com.example.loyalty"), as registered
	RegisteredOn   time.Time  // UTC, the first registration
	UpdatedOn      time.Time  // UTC, the last registration or retirement
	RetiredOn      *time.Time // UTC; nil = active
	RetiredReason  string     // the provider's answer that retired it ("UNREGISTERED", …) or "deleted"
	Version        int64
}

// PushDeviceRegisterParams registers (or re-registers) Token for a customer at Now.
type PushDeviceRegisterParams struct {
	BusinessUnitID string
	CustomerID     string
	Token          string
	Platform       PushPlatform
	App            string
	Now            time.Time // UTC
}

// PushDeviceRegisterResult is the device after registering; Created is false when the same
// token was active for the same customer already (nothing new).
type PushDeviceRegisterResult struct {
	Device  PushDevice
	Created bool
}

// PushDeviceRetireParams retires a customer's token at Now with Reason.
type PushDeviceRetireParams struct {
	BusinessUnitID string
	CustomerID     string
	Token          string
	Reason         string
	Now            time.Time // UTC
}

// PushDeviceStore is the device registry of the push channel (docs/channels.md#device-registry).
type PushDeviceStore interface {
	// PushDeviceRegister makes Token an active device of the customer, in one transaction:
	// an active row with the same platform and app is returned as it is (Created false); a
	// retired one, or one with another platform or app, is re-activated with the new
	// values; a new token is stored unless the customer has MaxPushDevicesPerCustomer
	// active devices (ErrConflict, nothing written). A token is one device: registering it
	// for another customer of the unit moves it (the old customer's row is retired with
	// reason "moved").
	PushDeviceRegister(ctx context.Context, p PushDeviceRegisterParams) (PushDeviceRegisterResult, error)
	// PushDeviceRetire marks an active token retired; retiring a retired or unknown token
	// is ErrNotFound.
	PushDeviceRetire(ctx context.Context, p PushDeviceRetireParams) (PushDevice, error)
	// PushDeviceList returns the customer's active devices, oldest registration first (at
	// most MaxPushDevicesPerCustomer).
	PushDeviceList(ctx context.Context, businessUnitID, customerID string) ([]PushDevice, error)
}
