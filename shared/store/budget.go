package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// Budgets and fees (docs/budgets.md): price policies, frozen command prices, campaign
// budgets with reservations, fee transfer records, the waiting list, the fee-fact projection
// and the support audit. Amounts are int64 minor units of the row's ISO 4217 Currency
// (shared/money checks them before they reach the store); instants are UTC.

// FeeFactsTopic is the outbox destination of CampaignFeeFact messages.
const FeeFactsTopic = "campaign-fee-facts"

// ErrBudgetShort: a budget change would leave MaxCost below Cost + ReservedCost
// (automation.CodeInvalidInput: nothing changed).
var ErrBudgetShort error = &automation.Error{Code: automation.CodeInvalidInput, Field: "maxCost", Message: "store: maxCost below cost + reservedCost"}

// ErrCurrencyMismatch: an amount's currency is not the budget's (automation.CodeInvalidInput).
var ErrCurrencyMismatch error = &automation.Error{Code: automation.CodeInvalidInput, Field: "currency", Message: "store: currency does not match the budget's"}

// PricePolicy prices one action type for one business unit (docs/budgets.md#price-policy).
type PricePolicy struct {
	BusinessUnitID string
	ActionType     string
	Formula        string // FIXED | PER_UNIT | PERCENT
	Rate           string // exact decimal; see budget.Formula
	Unit           string // what a command's quantity counts
	TransferType   string // the billing transfer type
	Currency       string
	MinFee         int64 // minor units; 0 = none
	MaxFee         int64 // minor units; 0 = none
	ConvertTo      string
	ConversionRate string // exact decimal, "" when ConvertTo is ""
	Version        int64
	UpdatedOn      time.Time
	UpdatedBy      string
}

// PricePolicyPutParams creates (ExpectedVersion 0: ErrConflict if it exists) or replaces
// (ExpectedVersion = the stored Version, else ErrLeaseLost) a policy; Version+1.
type PricePolicyPutParams struct {
	Policy          PricePolicy
	ExpectedVersion int64
	Now             time.Time
	Operator        string
}

// CommandPrice is a command's frozen price: the first freeze wins, every later one returns it.
type CommandPrice struct {
	CommandID      string
	BusinessUnitID string
	CampaignID     string
	ActionType     string
	Amount         int64
	Currency       string
	PriceJSON      string // the full frozen price (formula, rate, quantity, unit, transfer type, policy version)
	FrozenOn       time.Time
}

// Budget statuses and the reasons a budget is paused.
const (
	BudgetActive = "ACTIVE"
	BudgetPaused = "PAUSED"

	ShortBudget  = "BUDGET"  // cost + reservedCost + amount would exceed maxCost
	ShortBalance = "BALANCE" // the business unit's billing balance is too low
)

// CampaignBudget is one campaign's budget. Invariant (checked by SQL): 0 <= Cost,
// 0 <= ReservedCost, Cost + ReservedCost <= MaxCost. Version changes with MaxCost and Status
// only (the ETag); reservations and charges do not move it.
type CampaignBudget struct {
	BusinessUnitID string
	CampaignID     string
	Currency       string
	MaxCost        int64
	Cost           int64
	ReservedCost   int64
	Status         string // BudgetActive | BudgetPaused
	PausedReason   string // "" | ShortBudget | ShortBalance
	Version        int64
	CreatedOn      time.Time
	UpdatedOn      time.Time
}

// BudgetCreateParams creates a budget (ErrConflict when one exists).
type BudgetCreateParams struct {
	BusinessUnitID, CampaignID, Currency string
	MaxCost                              int64
	Now                                  time.Time
	Operator, Reason                     string
}

// BudgetSetMaxCostParams changes MaxCost if Version is ExpectedVersion (ErrLeaseLost) and the
// new MaxCost >= Cost + ReservedCost (ErrBudgetShort). A budget paused for ShortBudget whose
// new MaxCost is above Cost + ReservedCost becomes Active. One BudgetAudit row.
type BudgetSetMaxCostParams struct {
	BusinessUnitID, CampaignID string
	MaxCost                    int64
	ExpectedVersion            int64
	Now                        time.Time
	Operator, Reason           string
}

// BudgetSetStatusParams pauses (Reason ShortBudget/ShortBalance) or resumes (Status Active)
// a budget; ExpectedVersion 0 = unguarded, only without an Operator (the charging service's own
// pauses; with an Operator, 0 is ErrLeaseLost). Audited when Operator is set.
type BudgetSetStatusParams struct {
	BusinessUnitID, CampaignID string
	Status, Reason             string
	ExpectedVersion            int64
	Now                        time.Time
	Operator, AuditReason      string
}

// Reservation statuses: HELD → CONSUMED | RELEASED; RELEASED → HELD again on a new attempt.
const (
	ReservationHeld     = "HELD"
	ReservationConsumed = "CONSUMED"
	ReservationReleased = "RELEASED"
)

// BudgetReservation is the one reservation row of a command.
type BudgetReservation struct {
	ID             int64
	CommandID      string
	BusinessUnitID string
	CampaignID     string
	Amount         int64
	Currency       string
	Status         string
	Attempt        int64  // 1 on the first hold, +1 on each re-hold after a release
	OrderID        string // the billing order of the current attempt
	ActionStatus   string // the worker's action outcome once settled ("" before)
	CreatedOn      time.Time
	UpdatedOn      time.Time
}

// BudgetReserveParams asks to hold Amount for CommandID. OrderIDFor gives the order id of an
// attempt (deterministic from the command id and the attempt number).
type BudgetReserveParams struct {
	BusinessUnitID, CampaignID, CommandID string
	Amount                                int64
	Currency                              string
	OrderIDFor                            func(attempt int64) string
	Now                                   time.Time
}

// Reserve outcomes.
const (
	ReserveHeld     = "HELD"     // held now (a new row or a re-hold of a released one)
	ReserveExisting = "EXISTING" // the command's reservation is HELD or CONSUMED already: nothing changed
	ReserveShort    = "SHORT"    // cost + reservedCost + amount > maxCost: nothing held, the budget paused, the wait recorded
)

// BudgetReserveResult is the reservation after the call and the budget as it is.
type BudgetReserveResult struct {
	Outcome     string
	Reservation BudgetReservation
	Budget      CampaignBudget
}

// Transfer (fee) statuses: PENDING → SUCCEEDED | FAILED | UNKNOWN; UNKNOWN → SUCCEEDED | FAILED.
const (
	FeePending   = "PENDING"
	FeeSucceeded = "SUCCEEDED"
	FeeFailed    = "FAILED"
	FeeUnknown   = "UNKNOWN"
)

// FeeTransfer is the record of one billing order (OrderID unique).
type FeeTransfer struct {
	ID                int64
	OrderID           string
	CommandID         string
	ReservationID     int64
	Attempt           int64
	BusinessUnitID    string
	CampaignID        string
	Amount            int64
	Currency          string
	TransferType      string
	Day               string // the day the fee counts under (YYYY-MM-DD)
	Status            string
	CostAdded         bool
	ProviderReference string
	LastError         string
	Checks            int64 // lookups and answers recorded
	Revision          int64 // +1 on every status change; each writes a CampaignFeeFact
	ResolvedBy        string
	ResolutionReason  string
	CreatedOn         time.Time
	UpdatedOn         time.Time
}

// FeeTransferBeginParams records the intent to charge (PENDING) before the billing call. The
// command's reservation must be HELD with OrderID as its current order (else ErrConflict); an
// existing record of OrderID is returned unchanged.
type FeeTransferBeginParams struct {
	CommandID    string
	OrderID      string
	TransferType string
	Day          string
	Now          time.Time
}

// FeeTransferRecordParams records what is known about an order. Status PENDING is refused.
// SUCCEEDED adds Amount to Cost and consumes the reservation (once: CostAdded); FAILED
// releases it; UNKNOWN changes neither. A final status recorded again is a no-op; a
// different final status is ErrConflict. Operator/Reason: a support resolution (audited).
type FeeTransferRecordParams struct {
	OrderID           string
	Status            string
	ProviderReference string
	Error             string
	Now               time.Time
	Operator, Reason  string
	// ExpectedRevision guards the write (ErrLeaseLost when the stored Revision differs). 0 is
	// unguarded only without an Operator; a person's resolution with 0 is ErrLeaseLost.
	ExpectedRevision int64
}

// FeeTransferRecordResult is the state after the call; Changed is false for a no-op.
type FeeTransferRecordResult struct {
	Transfer    FeeTransfer
	Reservation BudgetReservation
	Changed     bool
}

// FeeTransferListParams lists transfers with one of Statuses, UpdatedOn <= UpdatedBefore
// (zero = any), Id > AfterID, of BusinessUnitID ("" = every unit), by Id, at most Limit.
type FeeTransferListParams struct {
	BusinessUnitID string
	Statuses       []string
	UpdatedBefore  time.Time
	AfterID        int64
	Limit          int
}

// ReservationReleaseParams releases the command's HELD reservation when no charge was sent
// for its order or the charge is FAILED; a PENDING or UNKNOWN charge keeps it HELD
// (ErrConflict). ActionStatus, when set, is recorded on the row. Attempt, when non-zero,
// names the attempt the caller acts on: when the reservation is at another attempt (the
// caller's was released and the command held again since), nothing changes, not even
// ActionStatus, and released is false with no error. Zero acts on the current attempt.
type ReservationReleaseParams struct {
	CommandID    string
	ActionStatus string
	Attempt      int64
	Now          time.Time
}

// BudgetWait is a command waiting for budget or balance (its campaign paused).
type BudgetWait struct {
	CommandID      string
	BusinessUnitID string
	CampaignID     string
	Reason         string // ShortBudget | ShortBalance
	Amount         int64
	Currency       string
	Since          time.Time
}

// ReservationStats summarises a campaign's HELD reservations.
type ReservationStats struct {
	Held       int64
	HeldAmount int64
	OldestHeld *time.Time
}

// CampaignFeeFact is one status change of a fee transfer, written to the outbox
// (Destination FeeFactsTopic, MessageId = EventID) in the transaction that made it.
type CampaignFeeFact struct {
	EventID        string    `json:"eventId"`
	OrderID        string    `json:"orderId"`
	CommandID      string    `json:"commandId"`
	BusinessUnitID string    `json:"businessUnitId"`
	CampaignID     string    `json:"campaignId"`
	Revision       int64     `json:"revision"`
	FeeStatus      string    `json:"feeStatus"`
	Amount         int64     `json:"amount,string"`
	Currency       string    `json:"currency"`
	Day            string    `json:"day"`
	OccurredOn     time.Time `json:"occurredOn"`
}

// FeeFactEventID is the event id of an order's change to revision.
func FeeFactEventID(orderID string, revision int64) string {
	return fmt.Sprintf("fee:%s:r%d", orderID, revision)
}

// FeeFactApplyResult counts one projection batch.
type FeeFactApplyResult struct {
	Applied int // facts newer than the projection's revision of their order
	Stale   int // replays and out-of-order facts: ignored
}

// FeeDayCost is the projected cost of one campaign on one day (SUCCEEDED fees only).
type FeeDayCost struct {
	Day      string `json:"day"`
	Cost     int64  `json:"cost,string"`
	Fees     int64  `json:"fees"`
	Currency string `json:"currency"`
}

// FeeReconciliation compares, for one campaign, the budget's Cost, the SUCCEEDED transfer
// records whose cost was added and the fee-fact projection.
type FeeReconciliation struct {
	BudgetCost    int64
	TransferCost  int64
	ProjectedCost int64
	Transfers     int64
	Projected     int64
}

// BudgetAuditRecord is one audited change of a budget, policy or fee.
type BudgetAuditRecord struct {
	ID             int64
	BusinessUnitID string
	CampaignID     string // "" for a price policy
	Subject        string // "budget", "pricePolicy:{actionType}", "fee:{orderId}"
	Action         string // CREATE, SET_MAX_COST, PAUSE, RESUME, PUT_POLICY, RESOLVE_FEE
	Operator       string
	Reason         string
	Before         string
	After          string
	CreatedOn      time.Time
}

// BudgetStore is the budgets-and-fees part of the store (docs/budgets.md).
type BudgetStore interface {
	PricePolicyPut(ctx context.Context, p PricePolicyPutParams) (PricePolicy, error)
	// PricePolicyGet returns the policy or ErrNotFound.
	PricePolicyGet(ctx context.Context, businessUnitID, actionType string) (PricePolicy, error)
	PricePolicyList(ctx context.Context, businessUnitID string) ([]PricePolicy, error)

	// PricePolicyGetInTx is PricePolicyGet inside tx: the campaign worker's claim prices the
	// command by the policy in force at the claim (budget.Service.FreezeInClaim).
	PricePolicyGetInTx(ctx context.Context, tx *sql.Tx, businessUnitID, actionType string) (PricePolicy, error)
	// CommandPriceFreeze stores p unless the command has a price; returns the stored one.
	CommandPriceFreeze(ctx context.Context, p CommandPrice) (CommandPrice, error)
	// CommandPriceFreezeInTx is CommandPriceFreeze inside tx: the campaign worker freezes a
	// command's price in the transaction that claims it (docs/budgets.md, "Frozen price").
	CommandPriceFreezeInTx(ctx context.Context, tx *sql.Tx, p CommandPrice) (CommandPrice, error)
	// CommandPriceGet returns the command's frozen price or ErrNotFound.
	CommandPriceGet(ctx context.Context, commandID string) (CommandPrice, error)

	BudgetCreate(ctx context.Context, p BudgetCreateParams) (CampaignBudget, error)
	// BudgetGet returns the budget or ErrNotFound.
	BudgetGet(ctx context.Context, businessUnitID, campaignID string) (CampaignBudget, error)
	BudgetSetMaxCost(ctx context.Context, p BudgetSetMaxCostParams) (CampaignBudget, error)
	BudgetSetStatus(ctx context.Context, p BudgetSetStatusParams) (CampaignBudget, error)
	// BudgetReserve is one transaction: the command's reservation if it is HELD or CONSUMED;
	// else the one conditional update cost + reservedCost + amount <= maxCost and the
	// reservation row (new, or RELEASED → HELD with Attempt+1), the wait removed; else
	// ReserveShort. ErrNotFound without a budget, ErrCurrencyMismatch.
	BudgetReserve(ctx context.Context, p BudgetReserveParams) (BudgetReserveResult, error)
	// ReservationGet returns the command's reservation or ErrNotFound.
	ReservationGet(ctx context.Context, commandID string) (BudgetReservation, error)
	// ReservationRelease: see ReservationReleaseParams; released reports a change.
	ReservationRelease(ctx context.Context, p ReservationReleaseParams) (r BudgetReservation, released bool, err error)
	// ReservationSettleInTx is ReservationRelease inside tx (the campaign worker's
	// post-result hook, in the transaction that records the command's outcome): a charge
	// PENDING or UNKNOWN keeps the reservation HELD and only records ActionStatus (no error).
	// ErrNotFound when the command has no reservation (a free command).
	ReservationSettleInTx(ctx context.Context, tx *sql.Tx, p ReservationReleaseParams) (r BudgetReservation, released bool, err error)
	// ReservationSetActionStatus records the worker's action outcome on the reservation.
	ReservationSetActionStatus(ctx context.Context, commandID, actionStatus string, now time.Time) error
	ReservationStats(ctx context.Context, businessUnitID, campaignID string) (ReservationStats, error)

	FeeTransferBegin(ctx context.Context, p FeeTransferBeginParams) (FeeTransfer, error)
	FeeTransferRecord(ctx context.Context, p FeeTransferRecordParams) (FeeTransferRecordResult, error)
	// FeeTransferGet returns the order's record or ErrNotFound.
	FeeTransferGet(ctx context.Context, orderID string) (FeeTransfer, error)
	FeeTransferList(ctx context.Context, p FeeTransferListParams) ([]FeeTransfer, error)

	// BudgetWaitPut records (or refreshes the reason of) a waiting command.
	BudgetWaitPut(ctx context.Context, w BudgetWait) error
	// BudgetWaitGet reads one command's wait; ErrNotFound when the command is not waiting
	// (never recorded, or its reservation since deleted the row).
	BudgetWaitGet(ctx context.Context, commandID string) (BudgetWait, error)
	// BudgetWaitList lists up to limit waiting commands of a unit, oldest first.
	BudgetWaitList(ctx context.Context, businessUnitID string, limit int) ([]BudgetWait, error)

	// FeeFactApply applies up to MaxBatch facts in one transaction: a fact replaces its
	// order's projected state only when its Revision is higher.
	FeeFactApply(ctx context.Context, facts []CampaignFeeFact, now time.Time) (FeeFactApplyResult, error)
	// FeeCostByDay returns the projected cost per day in [fromDay, toDay] (YYYY-MM-DD).
	FeeCostByDay(ctx context.Context, businessUnitID, campaignID, fromDay, toDay string) ([]FeeDayCost, error)
	FeeReconcile(ctx context.Context, businessUnitID, campaignID string) (FeeReconciliation, error)

	BudgetAuditList(ctx context.Context, businessUnitID, campaignID string, limit int) ([]BudgetAuditRecord, error)
}
