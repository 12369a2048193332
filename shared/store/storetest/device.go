package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// runPushDevice checks store.PushDeviceStore (docs/channels.md#device-registry).
func runPushDevice(t *testing.T, open Opener) {
	runCases(t, open, pushDeviceCases)
}

func devReg(bu, customer, token string, now time.Time) store.PushDeviceRegisterParams {
	return store.PushDeviceRegisterParams{BusinessUnitID: bu, CustomerID: customer, Token: token, Platform: store.PlatformAndroid,
		App: "com.example.loyalty", Now: now}
}

func mustRegister(t *testing.T, s store.Store, p store.PushDeviceRegisterParams) store.PushDeviceRegisterResult {
	t.Helper()
	r, err := s.PushDeviceRegister(context.Background(), p)
	if err != nil {
		t.Fatalf("PushDeviceRegister(%s, %s): %v", p.CustomerID, p.Token, err)
	}
	return r
}

func activeTokens(t *testing.T, s store.Store, bu, customer string) []string {
	t.Helper()
	ds, err := s.PushDeviceList(context.Background(), bu, customer)
	if err != nil {
		t.Fatalf("PushDeviceList: %v", err)
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Token
	}
	return out
}

func testDeviceIdempotent(t *testing.T, open Opener) {
	s := fresh(t, open)
	long := strings.Repeat("x", store.MaxPushTokenBytes)
	first := mustRegister(t, s, devReg("bu-1", "cust-1", long, T0))
	d := first.Device
	if !first.Created || d.Token != long || d.Platform != store.PlatformAndroid || d.App != "com.example.loyalty" ||
		!d.RegisteredOn.Equal(T0) || d.RegisteredOn.Location() != time.UTC || d.RetiredOn != nil || d.Version != 1 {
		t.Fatalf("first = %+v", first)
	}
	again := mustRegister(t, s, devReg("bu-1", "cust-1", long, T0.Add(time.Hour)))
	if again.Created || again.Device != d {
		t.Fatalf("the same registration again = %+v, want the first unchanged %+v", again, d)
	}
	// Another platform or app updates the row; it is still one device.
	ios := devReg("bu-1", "cust-1", long, T0.Add(2*time.Hour))
	ios.Platform = store.PlatformIOS
	up := mustRegister(t, s, ios)
	if up.Created || up.Device.Platform != store.PlatformIOS || up.Device.Version != 2 || !up.Device.RegisteredOn.Equal(T0) {
		t.Fatalf("re-registration on another platform = %+v", up)
	}
	if got := activeTokens(t, s, "bu-1", "cust-1"); len(got) != 1 {
		t.Fatalf("active devices %d, want 1", len(got))
	}
	// The same customer id in another unit is another customer.
	if got := activeTokens(t, s, "bu-2", "cust-1"); len(got) != 0 {
		t.Fatalf("bu-2 sees %d devices of bu-1", len(got))
	}
	bad := devReg("bu-1", "cust-1", "tok", T0)
	bad.Platform = "blackberry"
	if _, err := s.PushDeviceRegister(context.Background(), bad); err == nil {
		t.Fatalf("an unknown platform was stored")
	}
	if _, err := s.PushDeviceRegister(context.Background(), devReg("bu-1", "cust-1", long+"y", T0)); err == nil {
		t.Fatalf("a token over %d bytes was stored", store.MaxPushTokenBytes)
	}
}

func testDeviceBound(t *testing.T, open Opener) {
	s := fresh(t, open)
	for i := range store.MaxPushDevicesPerCustomer {
		mustRegister(t, s, devReg("bu-1", "cust-1", fmt.Sprintf("tok-%02d", i), T0.Add(time.Duration(i)*time.Second)))
	}
	_, err := s.PushDeviceRegister(context.Background(), devReg("bu-1", "cust-1", "tok-one-more", T0.Add(time.Hour)))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("device %d: %v, want ErrConflict", store.MaxPushDevicesPerCustomer+1, err)
	}
	// Re-registering a known token at the bound is not a new device.
	if r := mustRegister(t, s, devReg("bu-1", "cust-1", "tok-03", T0.Add(time.Hour))); r.Created {
		t.Fatalf("a known token counted as new")
	}
	got := activeTokens(t, s, "bu-1", "cust-1")
	if len(got) != store.MaxPushDevicesPerCustomer || got[0] != "tok-00" || got[len(got)-1] != fmt.Sprintf("tok-%02d", store.MaxPushDevicesPerCustomer-1) {
		t.Fatalf("active %v, want the first %d, oldest first", got, store.MaxPushDevicesPerCustomer)
	}
	// A retired device frees its place.
	if _, err := s.PushDeviceRetire(context.Background(), store.PushDeviceRetireParams{BusinessUnitID: "bu-1", CustomerID: "cust-1",
		Token: "tok-00", Reason: "deleted", Now: T0.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, s, devReg("bu-1", "cust-1", "tok-one-more", T0.Add(3*time.Hour)))
}

func testDeviceRetire(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	mustRegister(t, s, devReg("bu-1", "cust-1", "tok-a", T0))
	mustRegister(t, s, devReg("bu-1", "cust-1", "tok-b", T0))
	d, err := s.PushDeviceRetire(ctx, store.PushDeviceRetireParams{BusinessUnitID: "bu-1", CustomerID: "cust-1", Token: "tok-a", Reason: "UNREGISTERED", Now: T0.Add(time.Minute)})
	if err != nil || d.RetiredOn == nil || !d.RetiredOn.Equal(T0.Add(time.Minute)) || d.RetiredReason != "UNREGISTERED" || d.Version != 2 {
		t.Fatalf("retire = %+v, %v", d, err)
	}
	if got := activeTokens(t, s, "bu-1", "cust-1"); len(got) != 1 || got[0] != "tok-b" {
		t.Fatalf("active after retiring tok-a: %v", got)
	}
	if _, err := s.PushDeviceRetire(ctx, store.PushDeviceRetireParams{BusinessUnitID: "bu-1", CustomerID: "cust-1", Token: "tok-a", Reason: "UNREGISTERED", Now: T0}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("retiring a retired token: %v, want ErrNotFound", err)
	}
	if _, err := s.PushDeviceRetire(ctx, store.PushDeviceRetireParams{BusinessUnitID: "bu-1", CustomerID: "cust-1", Token: "tok-never", Reason: "deleted", Now: T0}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("retiring an unknown token: %v, want ErrNotFound", err)
	}
	// The app registers the token again (a reinstall that got the same token): active again.
	r := mustRegister(t, s, devReg("bu-1", "cust-1", "tok-a", T0.Add(time.Hour)))
	if !r.Created || r.Device.RetiredOn != nil || r.Device.RetiredReason != "" || !r.Device.RegisteredOn.Equal(T0) {
		t.Fatalf("re-registered = %+v", r)
	}
}

func testDeviceMoves(t *testing.T, open Opener) {
	s := fresh(t, open)
	mustRegister(t, s, devReg("bu-1", "cust-1", "tok-shared", T0))
	mustRegister(t, s, devReg("bu-1", "cust-2", "tok-shared", T0.Add(time.Minute)))
	if got := activeTokens(t, s, "bu-1", "cust-1"); len(got) != 0 {
		t.Fatalf("the token still pushes to its previous customer: %v", got)
	}
	if got := activeTokens(t, s, "bu-1", "cust-2"); len(got) != 1 {
		t.Fatalf("the new customer has %v", got)
	}
	// Another unit's registration of the same token is that unit's own.
	mustRegister(t, s, devReg("bu-2", "cust-9", "tok-shared", T0.Add(2*time.Minute)))
	if got := activeTokens(t, s, "bu-1", "cust-2"); len(got) != 1 {
		t.Fatalf("bu-2's registration moved bu-1's device: %v", got)
	}
}
