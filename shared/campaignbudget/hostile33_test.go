package campaignbudget_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/store"
)

// flakyCampaignGet fails CampaignGet once when armed: the worker's re-read of the campaign
// after the charge (the stop check) meets a transient store error.
type flakyCampaignGet struct {
	store.CampaignStore
	armed atomic.Bool
}

func (f *flakyCampaignGet) CampaignGet(ctx context.Context, bu, id string) (store.Campaign, error) {
	if f.armed.CompareAndSwap(true, false) {
		return store.Campaign{}, errors.New("database is locked")
	}
	return f.CampaignStore.CampaignGet(ctx, bu, id)
}

// The re-read after the charge fails transiently: the command is retried, and the retry
// neither charges the fee again nor reaches the provider twice; the fee stays one confirmed
// charge and the action is applied once.
func TestTransientFailureAfterTheChargeChargesOnce(t *testing.T) {
	r := newRig(t, 1000, nil)
	flaky := &flakyCampaignGet{CampaignStore: r.Store}
	r.Worker.Store = flaky
	charges := 0
	r.budget.Hooks = &budget.Hooks{AfterCharge: func(context.Context, string, error) error {
		charges++
		if charges == 1 {
			flaky.armed.Store(true)
		}
		return nil
	}}
	ids := r.start(1)
	r.runAll(ids, 1)
	r.Clock.Advance(time.Hour)
	r.Settle(time.Minute, 10)
	if charges == 0 || flaky.armed.Load() {
		t.Fatalf("the fault was not injected (charges %d, still armed %v)", charges, flaky.armed.Load())
	}
	r.chargedOnce(ids[0]) // after the retry, whatever the charge attempts (charges)
}
