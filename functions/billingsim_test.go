package main

import (
	"context"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/logsink"
)

func TestBillingSimCommandServesTheContract(t *testing.T) {
	url, _, stop := startSim(t, "billing-sim", "-addr", "127.0.0.1:0", "-balance", "bu-1:USD:500")
	c := &billing.Client{BaseURL: url, Timeout: 2 * time.Second}
	if b, err := c.GetBalance(context.Background(), "bu-1", "USD"); err != nil || b.Available != 500 {
		t.Fatalf("balance %+v %v", b, err)
	}
	if tr, err := c.CreateTransfer(context.Background(), billing.TransferRequest{OrderID: "o-1", BusinessUnitID: "bu-1", Amount: 200, Currency: "USD", TransferType: "FEE"}); err != nil || tr.Status != billing.StatusSucceeded {
		t.Fatalf("create %+v %v", tr, err)
	}
	stop()
	var out, errOut logsink.Buffer
	for _, bad := range [][]string{{"billing-sim", "-addr", "0.0.0.0:8089"}, {"billing-sim", "-balance", "bu-1:usd:5"}, {"billing-sim", "-balance", "bu-1:USD:-5"}} {
		if code := run(context.Background(), bad, func(string) string { return "" }, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d", bad, code)
		}
	}
}
