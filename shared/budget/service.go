package budget

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/store"
)

// Billing is the billing provider as the charging service uses it; *billing.Client is the
// HTTP implementation (docs/billing.md).
type Billing interface {
	CreateTransfer(ctx context.Context, r billing.TransferRequest) (billing.Transfer, error)
	GetTransfer(ctx context.Context, orderID string) (billing.Transfer, error)
	GetBalance(ctx context.Context, businessUnitID, currency string) (billing.Balance, error)
}

// Service is the charging service: price freezing, reservation, charge, confirmation,
// release, reconciliation and the support reads and actions. Safe for concurrent use; every
// step is one store transaction or one billing call, never both at once.
type Service struct {
	Store   store.BudgetStore
	Billing Billing
	Clock   automation.Clock
	// KnownActionType decides which action types a policy may price (nil:
	// DefaultKnownActionType). The composition root passes the campaign catalog's.
	KnownActionType func(string) bool
	// Campaigns, when set, is where CreateBudget checks that the campaign exists (a budget
	// for a campaign nobody has is refused). nil: not checked.
	Campaigns CampaignLookup
	// InDoubtAfter: a PENDING transfer older than this is reconciled (its charger may have
	// crashed between recording the intent and the answer). Default 2 minutes.
	InDoubtAfter time.Duration
	Log          *slog.Logger
	// Hooks are fault-injection points for the deterministic simulator (shared/sim); nil in
	// production.
	Hooks *Hooks
}

// CampaignLookup is the part of store.CampaignStore CreateBudget reads.
type CampaignLookup interface {
	CampaignGet(ctx context.Context, businessUnitID, campaignID string) (store.Campaign, error)
	CampaignList(ctx context.Context, businessUnitID, afterID string, limit int) ([]store.Campaign, error)
}

// Hooks are the charging service's named fault points. A non-nil error stops the step there
// as a crash would: nothing after the point is written and the error is returned (the
// transfer stays PENDING or UNKNOWN, and Prepare or Reconcile looks the order up by the same
// orderId).
type Hooks struct {
	// AfterCharge runs once a billing call about an order (the charge, or the lookup of an
	// in-doubt one) returned, before its answer is recorded: the charge may be committed at
	// the provider while the ledger still says PENDING. callErr is the call's error.
	AfterCharge func(ctx context.Context, orderID string, callErr error) error
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Command is what the charging service needs of a campaign command.
type Command struct {
	CommandID      string // stable across retries; the order id derives from it
	BusinessUnitID string
	CampaignID     string
	ActionType     string
	// Quantity is the count the price policy's Unit names (SMS, MB, minutes, the action's
	// value in minor units for PERCENT), an exact non-negative decimal; "" = 1.
	Quantity string
	// LocalDate is the business unit's local day the fee counts under (YYYY-MM-DD); "" = the
	// UTC date of the charge.
	LocalDate string
}

func (c Command) check() error {
	var errs []error
	for f, v := range map[string]string{"commandId": c.CommandID, "businessUnitId": c.BusinessUnitID, "campaignId": c.CampaignID, "actionType": c.ActionType} {
		if strings.TrimSpace(v) == "" {
			errs = append(errs, automation.Invalid(f, "is required"))
		}
	}
	if c.LocalDate != "" {
		if _, err := time.Parse("2006-01-02", c.LocalDate); err != nil {
			errs = append(errs, automation.Invalid("localDate", "%q is not YYYY-MM-DD", c.LocalDate))
		}
	}
	return automation.InvalidFields(errs...)
}

// OrderID is the billing order id of a command's charge attempt: "fee-" + the first 32 hex
// digits of SHA-256(commandId) + "-" + attempt. Deterministic, so a retry, a crash recovery
// and the reconciliation sweep all use the same order; a new attempt only follows a charge
// the provider confirmed FAILED.
func OrderID(commandID string, attempt int64) string {
	h := sha256.Sum256([]byte(commandID))
	return fmt.Sprintf("fee-%s-%d", hex.EncodeToString(h[:16]), attempt)
}

// DecisionKind is Prepare's verdict.
type DecisionKind string

// Decisions.
const (
	// Proceed: the command is free, or its fee is confirmed (SUCCEEDED, cost added, reservation
	// CONSUMED): run the action.
	Proceed DecisionKind = "PROCEED"
	// WaitingBudget: not enough budget (Short BUDGET) or billing balance (Short BALANCE);
	// nothing is held. The worker sets the command WAITING_BUDGET (never a final failure),
	// pauses the campaign with the reason and claims the same command again on resume.
	WaitingBudget DecisionKind = "WAITING_BUDGET"
	// FeeUnknown: the charge's outcome is unknown (timeout, lost or untrustworthy answer);
	// the reservation stays HELD and the action must not run yet. The worker retries the
	// command later; Reconcile (or the next Prepare) looks the order up by the same orderId.
	FeeUnknown DecisionKind = "FEE_UNKNOWN"
	// FeeRejected: the provider refused the charge for a reason other than balance; the
	// reservation is released. The worker fails the command permanently.
	FeeRejected DecisionKind = "FEE_REJECTED"
)

// Decision is Prepare's answer.
type Decision struct {
	Kind        DecisionKind
	Price       FrozenPrice // persist with the command (it never changes for this command)
	Short       string      // WaitingBudget: store.ShortBudget | store.ShortBalance
	OrderID     string      // priced commands: the order of the current attempt
	FeeStatus   string      // priced commands: the transfer's status ("" before any charge)
	Reservation store.BudgetReservation
	Reason      string // FeeRejected / FeeUnknown: what the provider said or what went wrong
}

// Prepare runs the fee steps of one command before its action (docs/budgets.md#charging):
// freeze the price → (free: Proceed) → resume where the store says the command is (CONSUMED:
// Proceed; HELD: charge or look up the same order) → otherwise check the unit's balance
// through the billing provider, then reserve with the one conditional update → record the
// transfer PENDING → create the transfer with the fixed orderId → record the answer, which
// in the same transaction adds the cost and consumes the reservation exactly once.
//
// Errors: automation.CodeInvalidInput (a bad command), ErrNoPricePolicy, store.ErrNotFound
// (no budget for the campaign), store.ErrCurrencyMismatch (the price's currency is not the
// budget's), billing or store failures before anything was held (retry the command later).
// Only Decision.Kind Proceed allows the action to run.
func (s *Service) Prepare(ctx context.Context, cmd Command) (Decision, error) {
	price, err := s.FreezePrice(ctx, cmd)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Kind: Proceed, Price: price}
	if !price.Priced {
		return d, nil
	}
	r, err := s.Store.ReservationGet(ctx, cmd.CommandID)
	switch {
	case err == nil && r.Status == store.ReservationConsumed:
		d.Reservation, d.OrderID, d.FeeStatus = r, r.OrderID, store.FeeSucceeded
		return d, nil
	case err == nil && r.Status == store.ReservationHeld:
		return s.charge(ctx, cmd, d, r)
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return Decision{}, err
	}
	// No reservation, or a released one (its charge failed or it was abandoned): check the
	// balance, then reserve.
	bal, err := s.Billing.GetBalance(ctx, cmd.BusinessUnitID, price.Currency)
	if err != nil {
		return Decision{}, fmt.Errorf("budget: balance of %s: %w", cmd.BusinessUnitID, err)
	}
	if bal.Available < price.Amount {
		return s.waitBalance(ctx, cmd, d)
	}
	res, err := s.Store.BudgetReserve(ctx, store.BudgetReserveParams{BusinessUnitID: cmd.BusinessUnitID, CampaignID: cmd.CampaignID,
		CommandID: cmd.CommandID, Amount: int64(price.Amount), Currency: price.Currency,
		OrderIDFor: func(a int64) string { return OrderID(cmd.CommandID, a) }, Now: s.Clock.Now()})
	if err != nil {
		return Decision{}, err
	}
	if res.Outcome == store.ReserveShort {
		d.Kind, d.Short = WaitingBudget, store.ShortBudget
		s.log().InfoContext(ctx, "budget short", "commandId", cmd.CommandID, "campaignId", cmd.CampaignID, "businessUnitId", cmd.BusinessUnitID,
			"amount", int64(price.Amount), "maxCost", res.Budget.MaxCost, "cost", res.Budget.Cost, "reservedCost", res.Budget.ReservedCost)
		return d, nil
	}
	if res.Reservation.Status == store.ReservationConsumed {
		d.Reservation, d.OrderID, d.FeeStatus = res.Reservation, res.Reservation.OrderID, store.FeeSucceeded
		return d, nil
	}
	return s.charge(ctx, cmd, d, res.Reservation)
}

func (s *Service) waitBalance(ctx context.Context, cmd Command, d Decision) (Decision, error) {
	now := s.Clock.Now()
	if err := s.Store.BudgetWaitPut(ctx, store.BudgetWait{CommandID: cmd.CommandID, BusinessUnitID: cmd.BusinessUnitID, CampaignID: cmd.CampaignID,
		Reason: store.ShortBalance, Amount: int64(d.Price.Amount), Currency: d.Price.Currency, Since: now}); err != nil {
		return Decision{}, err
	}
	if _, err := s.Store.BudgetSetStatus(ctx, store.BudgetSetStatusParams{BusinessUnitID: cmd.BusinessUnitID, CampaignID: cmd.CampaignID,
		Status: store.BudgetPaused, Reason: store.ShortBalance, Now: now}); err != nil {
		return Decision{}, err
	}
	d.Kind, d.Short = WaitingBudget, store.ShortBalance
	s.log().InfoContext(ctx, "billing balance short", "commandId", cmd.CommandID, "campaignId", cmd.CampaignID, "businessUnitId", cmd.BusinessUnitID,
		"amount", int64(d.Price.Amount))
	return d, nil
}

func (c Command) day(now time.Time) string {
	if c.LocalDate != "" {
		return c.LocalDate
	}
	return now.UTC().Format("2006-01-02")
}

// charge takes a HELD reservation to a known fee outcome where it can.
func (s *Service) charge(ctx context.Context, cmd Command, d Decision, r store.BudgetReservation) (Decision, error) {
	d.Reservation, d.OrderID = r, r.OrderID
	t, err := s.Store.FeeTransferGet(ctx, r.OrderID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// No charge was recorded for this order: record the intent, then send.
		if t, err = s.Store.FeeTransferBegin(ctx, store.FeeTransferBeginParams{CommandID: cmd.CommandID, OrderID: r.OrderID,
			TransferType: d.Price.TransferType, Day: cmd.day(s.Clock.Now()), Now: s.Clock.Now()}); err != nil {
			return Decision{}, err
		}
		out, err := s.send(ctx, t)
		if err != nil {
			return Decision{}, err
		}
		return s.decide(ctx, cmd, d, out)
	case err != nil:
		return Decision{}, err
	}
	switch t.Status {
	case store.FeeSucceeded, store.FeeFailed:
		return s.decide(ctx, cmd, d, settled{Transfer: t, Reservation: r})
	}
	// PENDING (a previous attempt may have sent it) or UNKNOWN: look up the same order.
	out, err := s.resolve(ctx, t)
	if err != nil {
		return Decision{}, err
	}
	return s.decide(ctx, cmd, d, out)
}

type settled struct {
	Transfer    store.FeeTransfer
	Reservation store.BudgetReservation
	Reason      string // the provider's reason for FAILED, or the uncertainty for UNKNOWN
}

func (s *Service) decide(ctx context.Context, cmd Command, d Decision, out settled) (Decision, error) {
	d.Reservation, d.FeeStatus, d.OrderID, d.Reason = out.Reservation, out.Transfer.Status, out.Transfer.OrderID, out.Reason
	switch out.Transfer.Status {
	case store.FeeSucceeded:
		d.Kind = Proceed
	case store.FeeFailed:
		if out.Reason == billing.ReasonInsufficientBalance {
			return s.waitBalance(ctx, cmd, d)
		}
		d.Kind = FeeRejected
	default:
		d.Kind = FeeUnknown
	}
	return d, nil
}

func transferRequest(t store.FeeTransfer) billing.TransferRequest {
	return billing.TransferRequest{OrderID: t.OrderID, BusinessUnitID: t.BusinessUnitID, Amount: money.Minor(t.Amount), Currency: t.Currency,
		TransferType: t.TransferType, Description: "campaign " + t.CampaignID + " command " + t.CommandID}
}

// send creates the transfer of a recorded order and records the answer. Only store errors
// are returned; a billing failure becomes UNKNOWN (or FAILED when the provider refused the
// request before committing).
func (s *Service) send(ctx context.Context, t store.FeeTransfer) (settled, error) {
	ans, err := s.Billing.CreateTransfer(ctx, transferRequest(t))
	return s.recordAnswer(ctx, t, ans, err)
}

// resolve looks an in-doubt order up by its orderId: found → its status is recorded; not
// found → the same order is sent again (the contract is idempotent by orderId, so this can
// charge at most once); no clear answer → UNKNOWN.
func (s *Service) resolve(ctx context.Context, t store.FeeTransfer) (settled, error) {
	ans, err := s.Billing.GetTransfer(ctx, t.OrderID)
	if errors.Is(err, billing.ErrNotFound) {
		return s.send(ctx, t)
	}
	if err == nil {
		err = billing.Check(transferRequest(t), ans)
	}
	return s.recordAnswer(ctx, t, ans, err)
}

func feeFinal(status string) bool { return status == store.FeeSucceeded || status == store.FeeFailed }

func (s *Service) recordAnswer(ctx context.Context, t store.FeeTransfer, ans billing.Transfer, callErr error) (settled, error) {
	if s.Hooks != nil && s.Hooks.AfterCharge != nil {
		if err := s.Hooks.AfterCharge(ctx, t.OrderID, callErr); err != nil {
			return settled{}, err
		}
	}
	p := store.FeeTransferRecordParams{OrderID: t.OrderID, Now: s.Clock.Now()}
	reason := ""
	switch {
	case callErr == nil && ans.Status == billing.StatusSucceeded:
		p.Status, p.ProviderReference = store.FeeSucceeded, ans.Reference
	case callErr == nil && ans.Status == billing.StatusFailed:
		p.Status, p.ProviderReference, reason = store.FeeFailed, ans.Reference, ans.Reason
		p.Error = "declined: " + ans.Reason
	case errors.Is(callErr, billing.ErrRejected):
		p.Status, reason = store.FeeFailed, "REJECTED"
		p.Error = callErr.Error()
	default: // ErrOutcomeUnknown, or anything unexpected: never guessed
		p.Status = store.FeeUnknown
		reason = callErr.Error()
		p.Error = reason
	}
	if len(p.Error) > 2000 {
		p.Error = p.Error[:2000]
	}
	// Guarded by the revision read before the call: a person's resolution (or another
	// worker's record) written meanwhile wins, and this answer is compared with it below.
	p.ExpectedRevision = t.Revision
	res, err := s.Store.FeeTransferRecord(ctx, p)
	if errors.Is(err, store.ErrLeaseLost) || errors.Is(err, store.ErrConflict) {
		cur, gerr := s.Store.FeeTransferGet(ctx, t.OrderID)
		switch {
		case gerr != nil:
			return settled{}, errors.Join(err, gerr)
		case !feeFinal(cur.Status) && cur.Revision != t.Revision: // another UNKNOWN was recorded: record this answer over it
			t.Revision = cur.Revision
			p.ExpectedRevision = cur.Revision
			res, err = s.Store.FeeTransferRecord(ctx, p)
		case cur.Status == p.Status || p.Status == store.FeeUnknown && feeFinal(cur.Status):
			// The same verdict, or a final one where this call learned nothing: it stands.
			r, rerr := s.Store.ReservationGet(ctx, t.CommandID)
			if rerr != nil {
				return settled{}, rerr
			}
			res, err = store.FeeTransferRecordResult{Transfer: cur, Reservation: r}, nil
		default:
			// The ledger says one thing (a person's resolution, most likely) and the provider
			// another: never overwritten silently; the loser is told and it is logged for support.
			s.log().ErrorContext(ctx, "fee ledger contradicts the provider's answer", "orderId", t.OrderID, "commandId", t.CommandID,
				"campaignId", t.CampaignID, "businessUnitId", t.BusinessUnitID, "errorCode", "FeeContradiction",
				"ledgerStatus", cur.Status, "resolvedBy", cur.ResolvedBy, "providerStatus", p.Status, "providerReference", p.ProviderReference)
			return settled{}, fmt.Errorf("order %s: ledger says %s (resolved by %q), the provider %s: %w", t.OrderID, cur.Status, cur.ResolvedBy, p.Status, store.ErrConflict)
		}
	}
	if err != nil {
		return settled{}, err
	}
	if res.Transfer.Status == store.FeeUnknown {
		s.log().WarnContext(ctx, "fee outcome unknown", "orderId", t.OrderID, "commandId", t.CommandID, "campaignId", t.CampaignID,
			"businessUnitId", t.BusinessUnitID, "errorCode", "FeeUnknown", "error", reason)
	}
	return settled{Transfer: res.Transfer, Reservation: res.Reservation, Reason: reason}, nil
}

// ActionOutcome is what became of a command's action, told to Settle.
type ActionOutcome string

// Action outcomes.
const (
	ActionSucceeded ActionOutcome = "SUCCEEDED"
	ActionFailed    ActionOutcome = "FAILED"
	ActionUnknown   ActionOutcome = "UNKNOWN"
	// ActionAbandoned: the action will not run (campaign stopped, command cancelled, Prepare
	// did not say Proceed and the worker gives up).
	ActionAbandoned ActionOutcome = "ABANDONED"
)

// Settlement is Settle's answer.
type Settlement struct {
	Reservation store.BudgetReservation
	FeeKept     bool // the fee was confirmed: it stays charged whatever the action did
	Released    bool // the reservation was released now
	Held        bool // the reservation stays HELD: its charge is PENDING/UNKNOWN, reconciliation owns it
}

// Settle records what became of a command's action (docs/budgets.md#charging). A confirmed
// fee is kept even when the action failed (no automatic refund); a HELD reservation is
// released when no charge was sent or the charge is FAILED, and stays HELD while its charge
// is PENDING or UNKNOWN. A free command (no reservation) is a no-op. Errors: store failures.
func (s *Service) Settle(ctx context.Context, cmd Command, outcome ActionOutcome) (Settlement, error) {
	switch outcome {
	case ActionSucceeded, ActionFailed, ActionUnknown, ActionAbandoned:
	default:
		return Settlement{}, automation.Invalid("outcome", "%q is not SUCCEEDED, FAILED, UNKNOWN or ABANDONED", outcome)
	}
	r, released, err := s.Store.ReservationRelease(ctx, store.ReservationReleaseParams{CommandID: cmd.CommandID, ActionStatus: string(outcome), Now: s.Clock.Now()})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Settlement{}, nil
	case errors.Is(err, store.ErrConflict):
		r, gerr := s.Store.ReservationGet(ctx, cmd.CommandID)
		if gerr != nil {
			return Settlement{}, gerr
		}
		if serr := s.Store.ReservationSetActionStatus(ctx, cmd.CommandID, string(outcome), s.Clock.Now()); serr != nil {
			return Settlement{}, serr
		}
		return Settlement{Reservation: r, Held: true}, nil
	case err != nil:
		return Settlement{}, err
	}
	return Settlement{Reservation: r, Released: released, FeeKept: r.Status == store.ReservationConsumed}, nil
}

// SettleInTx is Settle inside tx, the transaction that records the command's outcome (the
// campaign worker's post-result hook): the same rules, except that a reservation whose
// charge is PENDING or UNKNOWN is reported Held with no error (the outcome is still
// recorded on it). No billing call is made. Errors: a bad outcome, store failures (which
// roll the caller's transaction back).
func (s *Service) SettleInTx(ctx context.Context, tx *sql.Tx, cmd Command, outcome ActionOutcome) (Settlement, error) {
	switch outcome {
	case ActionSucceeded, ActionFailed, ActionUnknown, ActionAbandoned:
	default:
		return Settlement{}, automation.Invalid("outcome", "%q is not SUCCEEDED, FAILED, UNKNOWN or ABANDONED", outcome)
	}
	r, released, err := s.Store.ReservationSettleInTx(ctx, tx, store.ReservationReleaseParams{CommandID: cmd.CommandID, ActionStatus: string(outcome), Now: s.Clock.Now()})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Settlement{}, nil
	case err != nil:
		return Settlement{}, err
	}
	return Settlement{Reservation: r, Released: released, FeeKept: r.Status == store.ReservationConsumed, Held: r.Status == store.ReservationHeld}, nil
}

// ReconcileResult counts one reconciliation sweep.
type ReconcileResult struct {
	Checked      int `json:"checked"`
	Succeeded    int `json:"succeeded"`
	Failed       int `json:"failed"`
	StillUnknown int `json:"stillUnknown"`
	// Contradicted counts fees whose ledger status (a person's resolution written while the
	// provider was asked) differs from the provider's answer: logged as FeeContradiction.
	Contradicted int `json:"contradicted,omitempty"`
}

// Reconcile is the sweep of in-doubt fees: every UNKNOWN transfer and every PENDING one not
// touched for InDoubtAfter is looked up at the provider by its own orderId (never a new
// order) and its answer recorded; at most limit (1..store.MaxBatch) per call. A transfer that
// stays unknown waits for the next sweep or a person (the support queue).
func (s *Service) Reconcile(ctx context.Context, limit int) (ReconcileResult, error) {
	var res ReconcileResult
	wait := s.inDoubtAfter()
	now := s.Clock.Now()
	for _, q := range []store.FeeTransferListParams{
		{Statuses: []string{store.FeeUnknown}, Limit: limit},
		{Statuses: []string{store.FeePending}, UpdatedBefore: now.Add(-wait), Limit: limit},
	} {
		list, err := s.Store.FeeTransferList(ctx, q)
		if err != nil {
			return res, err
		}
		for _, t := range list {
			if res.Checked >= limit {
				return res, nil
			}
			res.Checked++
			out, err := s.resolve(ctx, t)
			if errors.Is(err, store.ErrConflict) { // a contradiction, logged by recordAnswer: support owns it
				res.Contradicted++
				continue
			}
			if err != nil {
				return res, err
			}
			switch out.Transfer.Status {
			case store.FeeSucceeded:
				res.Succeeded++
			case store.FeeFailed:
				res.Failed++
			default:
				res.StillUnknown++
			}
		}
	}
	return res, nil
}

// ErrBillingNotConfigured is what NoBilling answers.
var ErrBillingNotConfigured = errors.New("budget: no billing provider is configured")

// NoBilling is the billing provider of a runtime without one: the balance check fails, so
// Prepare refuses a priced command before holding anything (free commands are unaffected).
type NoBilling struct{}

// CreateTransfer implements Billing: refused before any request (billing.ErrRejected).
func (NoBilling) CreateTransfer(context.Context, billing.TransferRequest) (billing.Transfer, error) {
	return billing.Transfer{}, fmt.Errorf("%w: %w", billing.ErrRejected, ErrBillingNotConfigured)
}

// GetTransfer implements Billing.
func (NoBilling) GetTransfer(context.Context, string) (billing.Transfer, error) {
	return billing.Transfer{}, ErrBillingNotConfigured
}

// GetBalance implements Billing.
func (NoBilling) GetBalance(context.Context, string, string) (billing.Balance, error) {
	return billing.Balance{}, ErrBillingNotConfigured
}
