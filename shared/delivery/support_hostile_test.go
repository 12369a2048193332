package delivery_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// Resolution input is bounded by what the store keeps, in characters: a provider reference
// longer than store.MaxProviderReference is refused with a clear error (not cut silently,
// not a database error), and a reason is measured in characters, not bytes.
func TestResolveBoundsTextInCharacters(t *testing.T) {
	t.Parallel()
	p := &provider{afterSend: automation.Unknown(errors.New("timeout"))}
	e, key := sentOne(t, &testChannel{p: p})
	ctx := context.Background()
	j := e.job(t, key)
	req := delivery.ResolveRequest{BusinessUnitID: "bu-1", DeliveryKey: key, ExpectedVersion: j.Version, Status: store.NotificationSent,
		Operator: "ops", Reason: "portal shows it", ProviderReference: strings.Repeat("r", store.MaxProviderReference+1)}
	_, err := e.support.Resolve(ctx, req)
	var ae *automation.Error
	if !errors.As(err, &ae) || ae.Field != "providerReference" {
		t.Fatalf("over-long provider reference: %v", err)
	}
	if j2 := e.job(t, key); j2.Version != j.Version {
		t.Fatal("a refused resolution changed the job")
	}
	// 900 Vietnamese characters are 2,700 bytes but within the 1,000-character reason.
	req.ProviderReference = strings.Repeat("é", store.MaxProviderReference)
	req.Reason = strings.Repeat("ễ", 900)
	r, err := e.support.Resolve(ctx, req)
	if err != nil || r.ResolutionReason != req.Reason || r.ProviderReference != req.ProviderReference {
		t.Fatalf("resolve: %v", err)
	}
}
