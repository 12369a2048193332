package sim

import (
	"context"
	"testing"

	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/budget/billingsim"
	"github.com/automation-platform/automation/shared/money"
)

func TestOrderCommandGroupsTheAttemptsOfOneCommand(t *testing.T) {
	a, b := orderCommand("fee-0123456789abcdef0123456789abcdef-1"), orderCommand("fee-0123456789abcdef0123456789abcdef-2")
	if a != b || a != "fee-0123456789abcdef0123456789abcdef" {
		t.Fatalf("attempts of one command: %q, %q", a, b)
	}
	if c := orderCommand("fee-fedcba9876543210fedcba9876543210-1"); c == a {
		t.Fatalf("another command's order grouped with the first: %q", c)
	}
	if c := orderCommand("fee-0123456789abcdef0123456789abcdef-1-resent"); c != a {
		t.Fatalf("an order derived from the first: %q", c)
	}
}

// TestLedgerCheckCanFail: two SUCCEEDED orders of one command (a second attempt charged after
// the first was charged) break order-charged-once; a FAILED attempt and another command's
// order do not; what was charged is the sum of the SUCCEEDED orders.
func TestLedgerCheckCanFail(t *testing.T) {
	ok := func(id string, amount int64) billing.Transfer {
		return billing.Transfer{OrderID: id, Status: billing.StatusSucceeded, Amount: money.Minor(amount)}
	}
	c := &checker{checked: map[string]int{}}
	r := &report{c: c}
	spent := checkLedger(r, []billing.Transfer{ok("fee-aa-1", 10), {OrderID: "fee-bb-1", Status: billing.StatusFailed, Amount: 5}, ok("fee-bb-2", 5), ok("fee-cc-1", 10)})
	if len(r.vs) != 0 || spent != 25 {
		t.Fatalf("a clean ledger: %v, spent %d", r.vs, spent)
	}
	r = &report{c: c}
	checkLedger(r, []billing.Transfer{ok("fee-aa-1", 10), ok("fee-aa-2", 10)})
	if len(r.vs) != 1 || r.vs[0].Invariant != InvOrderChargedOnce {
		t.Fatalf("a command charged twice: %v", r.vs)
	}
}

// TestBillingFaultsFollowTheSeedAndKinds: the billing fault of a request is a function of the
// seed, the operation, the order and how often it was asked; a kind left out never fires, and
// balance requests and the drain get none.
func TestBillingFaultsFollowTheSeedAndKinds(t *testing.T) {
	draw := func(kinds map[Kind]bool) []billingsim.FaultKind {
		d := newDriver(&Workload{Seed: 9}, kinds, &checker{})
		var out []billingsim.FaultKind
		for i := 0; i < 400; i++ {
			f, _ := d.billingFault(billingsim.OpCreate, "fee-aa-1")
			out = append(out, f.Kind)
		}
		if f, has := d.billingFault(billingsim.OpBalance, "bu-1"); has {
			t.Errorf("a balance request got %v", f)
		}
		d.billingOff.Store(true)
		if f, has := d.billingFault(billingsim.OpCreate, "fee-aa-1"); has {
			t.Errorf("the drain got %v", f)
		}
		return out
	}
	all, _ := ParseKinds("all")
	a, b := draw(all), draw(all)
	n := map[billingsim.FaultKind]int{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("request %d: %q then %q", i, a[i], b[i])
		}
		n[a[i]]++
	}
	if n[billingsim.Fail] < 30 || n[billingsim.LostAnswer] < 30 || n[""] < 200 {
		t.Fatalf("fault shares: %v", n)
	}
	lost, _ := ParseKinds(string(BillingLost))
	for _, k := range draw(lost) {
		if k == billingsim.Fail {
			t.Fatal("billing-fail fired while only billing-lost-answer was enabled")
		}
	}
}

// TestBudgetRunIsAFunctionOfTheSeed: a seed with a tight budget injects the same billing
// faults, crashes and refusals, and evaluates the same assertions, run after run (the billing
// server's faults are drawn on its request goroutines).
func TestBudgetRunIsAFunctionOfTheSeed(t *testing.T) {
	seed := uint64(0)
	for s := uint64(1); s < 50 && seed == 0; s++ {
		w := Generate(s)
		for _, op := range w.Ops {
			if op.Kind == OpBudget {
				seed = s
				break
			}
		}
	}
	if seed == 0 {
		t.Fatal("no seed below 50 has a tight budget")
	}
	kinds, _ := ParseKinds("all")
	a := RunSeed(context.Background(), seed, kinds)
	b := RunSeed(context.Background(), seed, kinds)
	if a.Err != nil || b.Err != nil {
		t.Fatal(a.Err, b.Err)
	}
	if a.Checked[InvOrderChargedOnce] == 0 || a.Checked[InvFeeLedger] == 0 || a.Faults["budget-wait"] == 0 {
		t.Fatalf("seed %d: the budget part did not run: %s | %s", seed, joinCounts(a.Faults), joinCounts(a.Checked))
	}
	if joinCounts(a.Faults) != joinCounts(b.Faults) || joinCounts(a.Checked) != joinCounts(b.Checked) {
		t.Fatalf("seed %d twice:\n%s | %s\n%s | %s", seed, joinCounts(a.Faults), joinCounts(a.Checked), joinCounts(b.Faults), joinCounts(b.Checked))
	}
}
