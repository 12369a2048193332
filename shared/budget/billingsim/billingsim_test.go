package billingsim_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/budget/billingsim"
	"github.com/automation-platform/automation/shared/money"
)

func setup(t *testing.T) (*billingsim.Server, *billing.Client) {
	t.Helper()
	sim := billingsim.New(automation.NewManualClock(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)))
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	sim.SetBalance("bu-1", "USD", 1000)
	return sim, &billing.Client{BaseURL: srv.URL, Timeout: 300 * time.Millisecond}
}

func req(order string, amount int64) billing.TransferRequest {
	return billing.TransferRequest{OrderID: order, BusinessUnitID: "bu-1", Amount: billingMinor(amount), Currency: "USD", TransferType: "SMS_FEE"}
}

func TestContractIdempotentByOrderID(t *testing.T) {
	ctx := context.Background()
	sim, c := setup(t)
	first, err := c.CreateTransfer(ctx, req("o-1", 300))
	if err != nil || first.Status != billing.StatusSucceeded || first.Reference == "" {
		t.Fatalf("create %+v %v", first, err)
	}
	again, err := c.CreateTransfer(ctx, req("o-1", 300))
	if err != nil || again != first {
		t.Fatalf("repeat %+v %v", again, err)
	}
	if got := sim.BalanceOf("bu-1", "USD"); got != 700 {
		t.Fatalf("balance %d after one order sent twice", got)
	}
	if _, err := c.CreateTransfer(ctx, req("o-1", 301)); !errors.Is(err, billing.ErrOutcomeUnknown) {
		t.Fatalf("same order, other amount: %v", err)
	}
	declined, err := c.CreateTransfer(ctx, req("o-2", 701))
	if err != nil || declined.Status != billing.StatusFailed || declined.Reason != billing.ReasonInsufficientBalance {
		t.Fatalf("over balance %+v %v", declined, err)
	}
	if got, err := c.GetTransfer(ctx, "o-2"); err != nil || got.Status != billing.StatusFailed {
		t.Fatalf("get declined %+v %v", got, err)
	}
	if _, err := c.GetTransfer(ctx, "o-404"); !errors.Is(err, billing.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	b, err := c.GetBalance(ctx, "bu-1", "USD")
	if err != nil || b.Available != 700 {
		t.Fatalf("balance %+v %v", b, err)
	}
	bad := req("o-3", 1)
	bad.Currency = "usd"
	if _, err := c.CreateTransfer(ctx, bad); !errors.Is(err, billing.ErrRejected) {
		t.Fatalf("bad currency: %v", err)
	}
	if len(sim.Ledger()) != 2 {
		t.Fatalf("ledger %+v", sim.Ledger())
	}
}

func TestFaults(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		fault     billingsim.Fault
		committed bool
		wantErr   error
	}{
		{billingsim.Fault{Kind: billingsim.Fail}, false, billing.ErrOutcomeUnknown},
		{billingsim.Fault{Kind: billingsim.TimeoutAfterCommit, Delay: 2 * time.Second}, true, billing.ErrOutcomeUnknown},
		{billingsim.Fault{Kind: billingsim.LostAnswer}, true, billing.ErrOutcomeUnknown},
		{billingsim.Fault{Kind: billingsim.WrongOrder}, true, billing.ErrOutcomeUnknown},
		{billingsim.Fault{Kind: billingsim.WrongCurrency}, true, billing.ErrOutcomeUnknown},
		{billingsim.Fault{Kind: billingsim.Slow, Delay: 50 * time.Millisecond}, true, nil},
	}
	for _, tc := range cases {
		t.Run(string(tc.fault.Kind), func(t *testing.T) {
			sim, c := setup(t)
			sim.Inject(tc.fault)
			_, err := c.CreateTransfer(ctx, req("o-1", 10))
			if !errors.Is(err, tc.wantErr) && !(tc.wantErr == nil && err == nil) {
				t.Fatalf("create: %v, want %v", err, tc.wantErr)
			}
			got, err := c.GetTransfer(ctx, "o-1")
			if tc.committed != (err == nil) || (err == nil && got.Status != billing.StatusSucceeded) {
				t.Fatalf("lookup after %s: %+v %v", tc.fault.Kind, got, err)
			}
			// The same order again never charges twice.
			if _, err := c.CreateTransfer(ctx, req("o-1", 10)); err != nil {
				t.Fatal(err)
			}
			if l := sim.Ledger(); len(l) != 1 || sim.BalanceOf("bu-1", "USD") != 990 {
				t.Fatalf("ledger %+v balance %d", l, sim.BalanceOf("bu-1", "USD"))
			}
		})
	}
	t.Run("outOfBalance", func(t *testing.T) {
		sim, c := setup(t)
		sim.Inject(billingsim.Fault{Kind: billingsim.OutOfBalance, Op: billingsim.OpBalance}, billingsim.Fault{Kind: billingsim.OutOfBalance, Op: billingsim.OpCreate})
		if b, err := c.GetBalance(ctx, "bu-1", "USD"); err != nil || b.Available != 0 {
			t.Fatalf("balance %+v %v", b, err)
		}
		if tr, err := c.CreateTransfer(ctx, req("o-1", 10)); err != nil || tr.Status != billing.StatusFailed {
			t.Fatalf("create %+v %v", tr, err)
		}
	})
}

func billingMinor(v int64) money.Minor { return money.Minor(v) }

// TestFaultFuncDecidesPerRequest: the fault func is asked with the operation and the order (or
// the business unit) when no queued fault matches; a queued fault goes first; a Fail commits
// nothing, a LostAnswer commits and the client hears nothing.
func TestFaultFuncDecidesPerRequest(t *testing.T) {
	ctx := context.Background()
	sim, c := setup(t)
	var asked []string
	sim.SetFaultFunc(func(op, key string) (billingsim.Fault, bool) {
		asked = append(asked, op+" "+key)
		switch key {
		case "o-fail":
			return billingsim.Fault{Kind: billingsim.Fail}, true
		case "o-lost":
			return billingsim.Fault{Kind: billingsim.LostAnswer}, true
		}
		return billingsim.Fault{}, false
	})
	if _, err := c.CreateTransfer(ctx, req("o-fail", 100)); !errors.Is(err, billing.ErrOutcomeUnknown) {
		t.Fatalf("fail: %v", err)
	}
	if _, err := c.CreateTransfer(ctx, req("o-lost", 100)); !errors.Is(err, billing.ErrOutcomeUnknown) {
		t.Fatalf("lost answer: %v", err)
	}
	if _, err := c.GetBalance(ctx, "bu-1", "USD"); err != nil {
		t.Fatal(err)
	}
	sim.Inject(billingsim.Fault{Kind: billingsim.Fail, Op: billingsim.OpGet})
	if _, err := c.GetTransfer(ctx, "o-lost"); !errors.Is(err, billing.ErrOutcomeUnknown) {
		t.Fatalf("queued fault: %v", err)
	}
	sim.SetFaultFunc(nil)
	if got, err := c.GetTransfer(ctx, "o-lost"); err != nil || got.Status != billing.StatusSucceeded {
		t.Fatalf("the lost answer's charge: %+v %v", got, err)
	}
	if _, err := c.GetTransfer(ctx, "o-fail"); !errors.Is(err, billing.ErrNotFound) {
		t.Fatalf("the failed charge committed: %v", err)
	}
	want := []string{"create o-fail", "create o-lost", "balance bu-1"}
	if len(asked) != len(want) {
		t.Fatalf("asked %v, want %v", asked, want)
	}
	for i := range want {
		if asked[i] != want[i] {
			t.Fatalf("asked %v, want %v", asked, want)
		}
	}
	if got := sim.BalanceOf("bu-1", "USD"); got != 900 {
		t.Fatalf("balance %d: one charge of 100 committed", got)
	}
}
