package sim

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/budget/billingsim"
	"github.com/automation-platform/automation/shared/store"
)

// The budgets' part of the simulation (docs/simulation.md#budgets): the campaign of a seed
// gets a budget, price policies for its two actions and the simulated billing server, whose
// calls fail with nothing charged or charge and lose the answer; the invariants its ledger
// must keep.

// budgetCampaign is the campaign the budget belongs to (campaigns.go's `welcome`).
const budgetCampaign = "welcome"

// The fees of the workload's actions, in AUD cents: TOP_UP is 2 % of its 500 cents (PERCENT),
// ADD_DATA 0.005 per MB of its 1024 MB (PER_UNIT, 5.12 rounded half up once).
const (
	feeTopUp = 10
	feeData  = 5
	feeExec  = feeTopUp + feeData // the most one execution may cost
)

// budgets gives the campaign of unit a budget and the billing server: half of the time the
// budget is tight (room for one to four top-ups, so later commands wait for budget and the
// campaign pauses) and support raises it after each batch of sign-ups, 10 to 45 min later, to
// cover every sign-up so far; otherwise it is ample. (A waiting command is checked again
// every minute, and every minute is a step of the run: a short wait keeps seeds cheap.)
func (w *Workload) budgets(rng *rand.Rand, unit string) {
	maxCost := int64(1_000_000)
	tight := rng.IntN(2) == 0
	if tight {
		maxCost = feeTopUp*int64(1+rng.IntN(4)) + feeData*int64(rng.IntN(3))
	}
	policy := func(formula, rate, unit, transfer string) map[string]any {
		return map[string]any{"formula": formula, "rate": rate, "unit": unit, "transferType": transfer, "currency": "AUD"}
	}
	w.Billing = map[string]any{
		"balances": []any{map[string]any{"businessUnitId": unit, "currency": "AUD", "available": 100_000_000}},
		"pricePolicies": []any{
			map[string]any{"businessUnitId": unit, "actionType": "TOP_UP", "policy": policy("PERCENT", "2", "AUD_MINOR", "TOPUP_FEE")},
			map[string]any{"businessUnitId": unit, "actionType": "ADD_DATA", "policy": policy("PER_UNIT", "0.005", "MB", "DATA_FEE")},
		},
		"budgets": []any{map[string]any{"businessUnitId": unit, "campaignId": budgetCampaign, "currency": "AUD", "maxCost": maxCost}},
	}
	if !tight {
		return
	}
	joins := 0
	var raises []Op
	for _, op := range w.Ops {
		if op.Kind != OpIngest || len(op.Joins) == 0 {
			continue
		}
		if len(raises) > 0 && op.At.Equal(raises[len(raises)-1].At) {
			continue
		}
		joins += len(op.Joins)
		raises = append(raises, Op{At: op.At.Add(rngMinutes(rng, 10, 45)), Kind: OpBudget, Unit: unit, MaxCost: maxCost + feeExec*int64(joins)})
	}
	w.Ops = append(w.Ops, raises...)
}

// Billing implements replay.BillingObserver: the checker reads the billing server's ledger,
// and the driver draws the billing faults of each request.
func (d *driver) Billing(s *billingsim.Server) {
	d.chk.billing = s
	s.SetFaultFunc(d.billingFault)
}

// billingFault decides a billing request's fault: a create or lookup fails with nothing
// committed (500, `billing-fail`) or commits and loses its answer (`billing-lost-answer`).
// The draw hashes the seed, the operation, the order and how many times it was asked, so it
// does not depend on which goroutine asks first. Off during the final drain.
func (d *driver) billingFault(op, key string) (billingsim.Fault, bool) {
	if op == billingsim.OpBalance || d.billingOff.Load() {
		return billingsim.Fault{}, false
	}
	d.bmu.Lock()
	defer d.bmu.Unlock()
	n := d.billingAsked[op+" "+key]
	d.billingAsked[op+" "+key] = n + 1
	h := fnv.New64a()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], d.w.Seed)
	binary.LittleEndian.PutUint64(b[8:], uint64(n))
	h.Write(b[:])
	h.Write([]byte(op + " " + key))
	x := float64(h.Sum64()>>11) / (1 << 53)
	switch {
	case d.kinds[BillingFail] && x < pBillingFail:
		d.billingCounts[string(BillingFail)]++
		return billingsim.Fault{Kind: billingsim.Fail}, true
	case d.kinds[BillingLost] && x >= 1-pBillingLost:
		d.billingCounts[string(BillingLost)]++
		return billingsim.Fault{Kind: billingsim.LostAnswer}, true
	}
	return billingsim.Fault{}, false
}

// orderCommand is the part of a billing order id that names its command: budget.OrderID is
// "fee-" + 32 hex digits of the command id's hash + "-" + the attempt, and whatever follows
// the hash (the attempt, anything appended) is another order of the same command.
func orderCommand(orderID string) string {
	if parts := strings.SplitN(orderID, "-", 3); len(parts) == 3 {
		return parts[0] + "-" + parts[1]
	}
	return orderID
}

// checkBudgetSafety: what holds at every instant. No command is charged twice at the billing
// server (one SUCCEEDED order per command, whatever its attempts), and no budget's confirmed
// plus reserved spend, nor the billing server's charges for its campaign, exceed its maxCost.
func (c *checker) checkBudgetSafety(ctx context.Context, r *report) error {
	if c.billing == nil {
		return nil
	}
	spent := checkLedger(r, c.billing.Ledger())
	db, err := c.open()
	if err != nil {
		return err
	}
	rs, err := db.QueryContext(ctx, `SELECT CampaignId, MaxCost, Cost, ReservedCost FROM CampaignBudget`)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		var id string
		var maxCost, cost, reserved int64
		if err := rs.Scan(&id, &maxCost, &cost, &reserved); err != nil {
			return err
		}
		r.check(InvBudgetNotExceeded, cost >= 0 && reserved >= 0 && cost+reserved <= maxCost, "budget %s: cost %d + reserved %d above maxCost %d", id, cost, reserved, maxCost)
		// Every ledger charge is the one campaign's: what billing charged stays within it.
		r.check(InvBudgetNotExceeded, spent <= maxCost, "budget %s: the billing server charged %d, above maxCost %d", id, spent, maxCost)
	}
	return rs.Err()
}

// checkLedger checks order-charged-once on the billing server's ledger and returns what it
// charged (the sum of its SUCCEEDED orders, minor units).
func checkLedger(r *report, ledger []billing.Transfer) int64 {
	perOrder := map[string]int{}
	charged := map[string][]string{} // command part of the order id -> SUCCEEDED orders
	var spent int64
	for _, t := range ledger {
		perOrder[t.OrderID]++
		if t.Status == billing.StatusSucceeded {
			charged[orderCommand(t.OrderID)] = append(charged[orderCommand(t.OrderID)], t.OrderID)
			spent += int64(t.Amount)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(perOrder)) {
		r.check(InvOrderChargedOnce, perOrder[id] == 1, "order %s is in the billing ledger %d times", id, perOrder[id])
	}
	for _, k := range slices.Sorted(maps.Keys(charged)) {
		r.check(InvOrderChargedOnce, len(charged[k]) == 1, "one command charged %d times at the billing server: orders %v", len(charged[k]), charged[k])
	}
	return spent
}

// checkBudgetFinal: after the drain (billing faults off, every in-doubt fee reconciled) the
// ledger and the store agree: every fee transfer is SUCCEEDED or FAILED; each SUCCEEDED charge
// at the billing server is a SUCCEEDED transfer of a command of the campaign, its cost added
// once, and the reverse; the budget's cost is the sum of the charges and nothing stays
// reserved; every action that took effect at the provider had its fee confirmed first.
func (c *checker) checkBudgetFinal(ctx context.Context, r *report) error {
	if c.billing == nil {
		return nil
	}
	if err := c.checkBudgetSafety(ctx, r); err != nil {
		return err
	}
	db, err := c.open()
	if err != nil {
		return err
	}
	type transfer struct {
		command, status string
		amount          int64
		costAdded       bool
	}
	transfers := map[string]transfer{}
	feeOf := map[string]string{} // command id -> its SUCCEEDED order
	rs, err := db.QueryContext(ctx, `SELECT OrderId, CommandId, Status, Amount, CostAdded FROM FeeTransfer`)
	if err != nil {
		return err
	}
	for rs.Next() {
		var id string
		var t transfer
		if err := rs.Scan(&id, &t.command, &t.status, &t.amount, &t.costAdded); err != nil {
			rs.Close()
			return err
		}
		transfers[id] = t
		if t.status == store.FeeSucceeded {
			feeOf[t.command] = id
		}
	}
	rs.Close()
	commands := map[string]string{} // command id -> status
	effects := map[string]string{}  // command id -> effect key
	rs, err = db.QueryContext(ctx, `SELECT CommandId, Status, EffectKey FROM CampaignCommand WHERE CampaignId = ?`, budgetCampaign)
	if err != nil {
		return err
	}
	for rs.Next() {
		var id, st, eff string
		if err := rs.Scan(&id, &st, &eff); err != nil {
			rs.Close()
			return err
		}
		commands[id], effects[id] = st, eff
	}
	rs.Close()
	var ledgerCost int64
	charged := map[string]bool{}
	for _, t := range c.billing.Ledger() {
		if t.Status != billing.StatusSucceeded {
			continue
		}
		ledgerCost += int64(t.Amount)
		charged[t.OrderID] = true
		ft, ok := transfers[t.OrderID]
		r.check(InvFeeLedger, ok && ft.status == store.FeeSucceeded && ft.costAdded && ft.amount == int64(t.Amount),
			"order %s charged %d at the billing server; its transfer %+v (recorded %v)", t.OrderID, t.Amount, ft, ok)
		_, known := commands[ft.command]
		r.check(InvFeeLedger, !ok || known, "order %s charged for command %s, which the campaign does not have", t.OrderID, ft.command)
	}
	for _, id := range slices.Sorted(maps.Keys(transfers)) {
		t := transfers[id]
		r.check(InvFeeLedger, t.status == store.FeeSucceeded || t.status == store.FeeFailed, "fee %s of command %s is left %s after the drain", id, t.command, t.status)
		r.check(InvFeeLedger, t.status != store.FeeSucceeded || charged[id], "fee %s is SUCCEEDED in the store but not charged at the billing server", id)
	}
	var cost, reserved int64
	if err := db.QueryRowContext(ctx, `SELECT Cost, ReservedCost FROM CampaignBudget WHERE CampaignId = ?`, budgetCampaign).Scan(&cost, &reserved); err != nil {
		return fmt.Errorf("sim: budget of %s: %w", budgetCampaign, err)
	}
	r.check(InvFeeLedger, cost == ledgerCost, "budget cost %d, the billing server charged %d", cost, ledgerCost)
	held, err := c.count(ctx, `SELECT COUNT(*) FROM BudgetReservation WHERE Status = 'HELD'`)
	if err != nil {
		return err
	}
	r.check(InvFeeNotHeld, held == 0 && reserved == 0, "%d reservations left HELD after the drain (reservedCost %d)", held, reserved)
	telco := c.providers["telco"]
	for _, id := range slices.Sorted(maps.Keys(commands)) {
		applied := 0
		if telco != nil {
			applied = telco.Applied(effects[id])
		}
		r.check(InvFeeBeforeAction, applied == 0 || feeOf[id] != "", "command %s (%s) took effect %d times at the provider without a confirmed fee", id, commands[id], applied)
		r.check(InvFeeBeforeAction, commands[id] != string(store.CommandSucceeded) || feeOf[id] != "", "command %s is SUCCEEDED without a confirmed fee", id)
	}
	return nil
}

// checkStopDuringCharge: a command whose charge the campaign's stop interrupted never
// reached the provider: it ends CANCELLED (or, when its claim was in doubt, UNKNOWN after
// a lookup that told nothing), applied 0 times. Its fee follows the fee-ledger rules: a
// confirmed fee stays charged (seed 002), a failed one charged nothing.
func (c *checker) checkStopDuringCharge(ctx context.Context, r *report) error {
	if len(c.stoppedOrders) == 0 {
		return nil
	}
	db, err := c.open()
	if err != nil {
		return err
	}
	for _, order := range c.stoppedOrders {
		var cmd, st, eff string
		err := db.QueryRowContext(ctx, `SELECT c.CommandId, c.Status, c.EffectKey FROM FeeTransfer f JOIN CampaignCommand c ON c.CommandId = f.CommandId WHERE f.OrderId = ?`, order).Scan(&cmd, &st, &eff)
		if err != nil {
			return fmt.Errorf("sim: the command of stopped order %s: %w", order, err)
		}
		applied := 0
		if telco := c.providers["telco"]; telco != nil {
			applied = telco.Applied(eff)
		}
		r.check(InvStopDuringCharge, applied == 0 && (st == string(store.CommandCancelled) || st == string(store.CommandUnknown)),
			"command %s, whose charge (order %s) the campaign's stop interrupted, is %s and took effect %d times at the provider", cmd, order, st, applied)
	}
	return nil
}

// billingWork: fees still in doubt (PENDING or UNKNOWN) keep the drain running: the sweep
// reconciles them by their orderId.
func (c *checker) billingWork(ctx context.Context) (bool, error) {
	if c.billing == nil {
		return false, nil
	}
	n, err := c.count(ctx, `SELECT COUNT(*) FROM FeeTransfer WHERE Status IN ('PENDING', 'UNKNOWN')`)
	return n > 0, err
}
