package budgettest

import (
	"context"
	"database/sql"
	"sync/atomic"

	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/store"
)

// Crash says where the flow dies and how.
type Crash struct {
	// At is the point ("after:BudgetReserve"); "" never crashes.
	At string
	// Value is what the crash panics with (the test recovers it).
	Value any
	// Fired, when set, makes the crash happen once (the first time At is reached, across
	// every wrapper sharing it); nil: every time.
	Fired *atomic.Bool
}

// Point panics with Value when p is At (and, with Fired, it has not fired yet).
func (c Crash) Point(p string) {
	if c.At == p && (c.Fired == nil || c.Fired.CompareAndSwap(false, true)) {
		panic(c.Value)
	}
}

// Store is a budget store that crashes after the named call committed.
type Store struct {
	store.BudgetStore
	Crash
}

func (c Store) CommandPriceFreeze(ctx context.Context, p store.CommandPrice) (store.CommandPrice, error) {
	r, err := c.BudgetStore.CommandPriceFreeze(ctx, p)
	c.Point("after:CommandPriceFreeze")
	return r, err
}

// CommandPriceFreezeInTx dies inside the claim's transaction, after the freeze's
// statements: the claim and the freeze roll back together.
func (c Store) CommandPriceFreezeInTx(ctx context.Context, tx *sql.Tx, p store.CommandPrice) (store.CommandPrice, error) {
	r, err := c.BudgetStore.CommandPriceFreezeInTx(ctx, tx, p)
	c.Point("in:CommandPriceFreezeInTx")
	return r, err
}

// CommandPriceGet dies once the price is read back: after a claim that froze it committed.
func (c Store) CommandPriceGet(ctx context.Context, commandID string) (store.CommandPrice, error) {
	r, err := c.BudgetStore.CommandPriceGet(ctx, commandID)
	c.Point("after:CommandPriceGet")
	return r, err
}

func (c Store) BudgetReserve(ctx context.Context, p store.BudgetReserveParams) (store.BudgetReserveResult, error) {
	r, err := c.BudgetStore.BudgetReserve(ctx, p)
	c.Point("after:BudgetReserve")
	return r, err
}

func (c Store) FeeTransferBegin(ctx context.Context, p store.FeeTransferBeginParams) (store.FeeTransfer, error) {
	r, err := c.BudgetStore.FeeTransferBegin(ctx, p)
	c.Point("after:FeeTransferBegin")
	return r, err
}

func (c Store) FeeTransferRecord(ctx context.Context, p store.FeeTransferRecordParams) (store.FeeTransferRecordResult, error) {
	r, err := c.BudgetStore.FeeTransferRecord(ctx, p)
	c.Point("after:FeeTransferRecord")
	return r, err
}

// Billing is a billing client that crashes before a transfer reaches the provider, or
// after the provider answered (the charge is committed there; the answer dies with the
// worker).
type Billing struct {
	budget.Billing
	Crash
}

func (c Billing) GetBalance(ctx context.Context, bu, currency string) (billing.Balance, error) {
	r, err := c.Billing.GetBalance(ctx, bu, currency)
	c.Point("after:GetBalance")
	return r, err
}

func (c Billing) CreateTransfer(ctx context.Context, r billing.TransferRequest) (billing.Transfer, error) {
	c.Point("before:CreateTransfer")
	t, err := c.Billing.CreateTransfer(ctx, r)
	c.Point("after:CreateTransfer")
	return t, err
}
