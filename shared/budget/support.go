package budget

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/strictjson"
)

// View is the support view of one campaign's budget. Amounts are minor units of Currency
// (strings in JSON).
type View struct {
	BusinessUnitID string      `json:"businessUnitId"`
	CampaignID     string      `json:"campaignId"`
	Currency       string      `json:"currency"`
	MaxCost        money.Minor `json:"maxCost"`
	Cost           money.Minor `json:"cost"`
	ReservedCost   money.Minor `json:"reservedCost"`
	Available      money.Minor `json:"available"` // maxCost - cost - reservedCost
	Status         string      `json:"status"`
	PausedReason   string      `json:"pausedReason,omitempty"`
	HeldCount      int64       `json:"heldReservations"`
	OldestHeldOn   *time.Time  `json:"oldestHeldOn,omitempty"`
	OldestHeldAge  int64       `json:"oldestHeldAgeSeconds"` // 0 when none
	Version        int64       `json:"version"`
	UpdatedOn      time.Time   `json:"updatedOn"`
}

// GetView returns the budget view; store.ErrNotFound when the campaign has no budget.
func (s *Service) GetView(ctx context.Context, bu, campaign string) (View, error) {
	b, err := s.Store.BudgetGet(ctx, bu, campaign)
	if err != nil {
		return View{}, err
	}
	st, err := s.Store.ReservationStats(ctx, bu, campaign)
	if err != nil {
		return View{}, err
	}
	v := View{BusinessUnitID: b.BusinessUnitID, CampaignID: b.CampaignID, Currency: b.Currency, MaxCost: money.Minor(b.MaxCost),
		Cost: money.Minor(b.Cost), ReservedCost: money.Minor(b.ReservedCost), Available: money.Minor(b.MaxCost - b.Cost - b.ReservedCost),
		Status: b.Status, PausedReason: b.PausedReason, HeldCount: st.Held, OldestHeldOn: st.OldestHeld, Version: b.Version, UpdatedOn: b.UpdatedOn}
	if st.OldestHeld != nil {
		v.OldestHeldAge = int64(max(s.Clock.Now().Sub(*st.OldestHeld), 0) / time.Second)
	}
	return v, nil
}

// checkReason is the one audit rule for a reason (automation.CheckReasonText): optional
// here, at most automation.MaxReasonChars characters (BudgetAudit.Reason is nvarchar(2000)
// on SQL Server, which 1,000 characters never overrun in UTF-16 units), and without control
// or bidirectional-text characters other than new lines and tabs. Errors: CodeInvalidInput
// on field "reason".
func checkReason(reason string) error {
	return automation.CheckReasonText(reason, false)
}

// BudgetInput creates or changes a budget: {"currency":"USD","maxCost":"150000","reason":"…"}.
type BudgetInput struct {
	Currency string      `json:"currency"`
	MaxCost  money.Minor `json:"maxCost"`
	Reason   string      `json:"reason,omitempty"`
}

// CreateBudget creates a campaign's budget (audited). Errors: CodeInvalidInput (currency,
// maxCost, ids), store.ErrConflict when it exists.
func (s *Service) CreateBudget(ctx context.Context, bu, campaign string, in BudgetInput, operator string) (View, error) {
	var errs []error
	if strings.TrimSpace(campaign) == "" || len(campaign) > 200 {
		errs = append(errs, automation.Invalid("campaignId", "is required (at most 200 characters)"))
	}
	if _, err := money.ParseCurrency(in.Currency); err != nil {
		errs = append(errs, err)
	}
	if err := in.MaxCost.Check("maxCost"); err != nil {
		errs = append(errs, err)
	}
	if err := checkReason(in.Reason); err != nil {
		errs = append(errs, err)
	}
	if err := automation.InvalidFields(errs...); err != nil {
		return View{}, err
	}
	if err := s.checkCampaign(ctx, bu, campaign); err != nil {
		return View{}, err
	}
	if _, err := s.Store.BudgetCreate(ctx, store.BudgetCreateParams{BusinessUnitID: bu, CampaignID: campaign, Currency: in.Currency,
		MaxCost: int64(in.MaxCost), Now: s.Clock.Now(), Operator: operator, Reason: in.Reason}); err != nil {
		return View{}, err
	}
	return s.GetView(ctx, bu, campaign)
}

// checkCampaign refuses a budget for a campaign the business unit does not have (a typo
// would create a budget nothing ever spends): automation.Invalid naming campaignId, with a
// "did you mean" among the unit's first 1,000 campaigns. Without Campaigns, not checked.
func (s *Service) checkCampaign(ctx context.Context, bu, campaign string) error {
	if s.Campaigns == nil {
		return nil
	}
	_, err := s.Campaigns.CampaignGet(ctx, bu, campaign)
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var ids []string
	if list, lerr := s.Campaigns.CampaignList(ctx, bu, "", 1000); lerr == nil {
		for _, c := range list {
			ids = append(ids, c.CampaignID)
		}
	}
	return automation.Invalid("campaignId", "campaign %q does not exist in business unit %q: create the campaign first%s", campaign, bu, automation.DidYouMean(campaign, ids))
}

// SetMaxCost changes maxCost guarded by the budget's version (If-Match). Raising it resumes a
// budget paused for BUDGET; lowering it below cost + reservedCost is refused
// (store.ErrBudgetShort, CodeInvalidInput) and changes nothing. The currency, when given, must
// be the budget's (CodeInvalidInput). Errors also: store.ErrLeaseLost (stale version),
// store.ErrNotFound.
func (s *Service) SetMaxCost(ctx context.Context, bu, campaign string, in BudgetInput, expectedVersion int64, operator string) (View, error) {
	if err := automation.InvalidFields(in.MaxCost.Check("maxCost"), checkReason(in.Reason)); err != nil {
		return View{}, err
	}
	if in.Currency != "" {
		b, err := s.Store.BudgetGet(ctx, bu, campaign)
		if err != nil {
			return View{}, err
		}
		if in.Currency != b.Currency {
			return View{}, automation.Invalid("currency", "%q is not the budget's currency %s", in.Currency, b.Currency)
		}
	}
	if _, err := s.Store.BudgetSetMaxCost(ctx, store.BudgetSetMaxCostParams{BusinessUnitID: bu, CampaignID: campaign, MaxCost: int64(in.MaxCost),
		ExpectedVersion: expectedVersion, Now: s.Clock.Now(), Operator: operator, Reason: in.Reason}); err != nil {
		return View{}, s.versionMoved(ctx, bu, campaign, expectedVersion, err)
	}
	return s.GetView(ctx, bu, campaign)
}

// Resume sets a paused budget ACTIVE (audited), guarded by its version; the worker resumes
// the campaign and re-claims its waiting commands, which Prepare checks again. Errors:
// store.ErrConflict when the budget is not paused, store.ErrLeaseLost, store.ErrNotFound.
func (s *Service) Resume(ctx context.Context, bu, campaign string, expectedVersion int64, operator, reason string) (View, error) {
	if err := checkReason(reason); err != nil {
		return View{}, err
	}
	if expectedVersion < 1 { // versions start at 1: 0 would be an unguarded write
		return View{}, fmt.Errorf("budget of %s: version %d: %w", campaign, expectedVersion, store.ErrLeaseLost)
	}
	b, err := s.Store.BudgetGet(ctx, bu, campaign)
	if err != nil {
		return View{}, err
	}
	if b.Status != store.BudgetPaused {
		return View{}, fmt.Errorf("budget of %s is %s, not paused: %w", campaign, b.Status, store.ErrConflict)
	}
	if _, err := s.Store.BudgetSetStatus(ctx, store.BudgetSetStatusParams{BusinessUnitID: bu, CampaignID: campaign, Status: store.BudgetActive,
		ExpectedVersion: expectedVersion, Now: s.Clock.Now(), Operator: operator, AuditReason: reason}); err != nil {
		return View{}, s.versionMoved(ctx, bu, campaign, expectedVersion, err)
	}
	return s.GetView(ctx, bu, campaign)
}

// versionMoved turns a stale version (store.ErrLeaseLost) into a 412 naming the budget's
// version in force, so the caller knows what to read; other errors pass through. The answer
// still wraps store.ErrLeaseLost.
func (s *Service) versionMoved(ctx context.Context, bu, campaign string, expected int64, err error) error {
	if !errors.Is(err, store.ErrLeaseLost) {
		return err
	}
	b, gerr := s.Store.BudgetGet(ctx, bu, campaign)
	if gerr != nil {
		return err
	}
	return &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match",
		Message: fmt.Sprintf("the budget is at version \"%d\", not \"%d\"; read it again", b.Version, expected), Err: err}
}

// PutPolicy validates and stores a price policy (ExpectedVersion 0 creates). Errors:
// CodeInvalidInput (ValidatePolicy), store.ErrConflict, store.ErrLeaseLost.
func (s *Service) PutPolicy(ctx context.Context, bu, actionType string, in PolicyInput, expectedVersion int64, operator string) (store.PricePolicy, error) {
	p, err := ValidatePolicy(bu, actionType, in, s.KnownActionType)
	if err != nil {
		return store.PricePolicy{}, err
	}
	return s.Store.PricePolicyPut(ctx, store.PricePolicyPutParams{Policy: p, ExpectedVersion: expectedVersion, Now: s.Clock.Now(), Operator: operator})
}

// ResolveRequest is a person's resolution of an in-doubt fee after checking with the
// provider: Status SUCCEEDED or FAILED, guarded by the transfer's Revision.
type ResolveRequest struct {
	BusinessUnitID   string
	OrderID          string
	Status           string
	ExpectedRevision int64
	Operator         string
	Reason           string
}

// ResolveFee records a manual resolution of a fee in doubt (InDoubt: UNKNOWN, or PENDING
// untouched for InDoubtAfter), audited, with the same effects as a provider answer
// (SUCCEEDED adds the cost once and consumes the reservation; FAILED releases it). A PENDING
// fee younger than that has its charge call in flight: a person's guess could contradict
// what the provider is committing, so it is refused. The store write is guarded by
// ExpectedRevision (at least 1), as the worker's own record of an answer is guarded by the
// revision it read, so of a person and a worker racing exactly one writes.
// Errors: CodeInvalidInput (status; operator and reason by automation.CheckAudit),
// store.ErrNotFound (unknown order or another unit's), store.ErrConflict (already final),
// automation.CodeConflict (PENDING and not in doubt yet: the message says since when and
// from when it can be resolved), store.ErrLeaseLost (revision moved on, or none given).
func (s *Service) ResolveFee(ctx context.Context, r ResolveRequest) (store.FeeTransfer, error) {
	var errs []error
	if r.Status != store.FeeSucceeded && r.Status != store.FeeFailed {
		errs = append(errs, automation.Invalid("status", "must be SUCCEEDED or FAILED"))
	}
	op, reason, auditErr := automation.CheckAudit(r.Operator, r.Reason)
	errs = append(errs, auditErr)
	if err := automation.InvalidFields(errs...); err != nil {
		return store.FeeTransfer{}, err
	}
	t, err := s.Store.FeeTransferGet(ctx, r.OrderID)
	if err != nil {
		return store.FeeTransfer{}, err
	}
	if t.BusinessUnitID != r.BusinessUnitID {
		return store.FeeTransfer{}, store.ErrNotFound
	}
	now := s.Clock.Now()
	if t.Status != store.FeeUnknown && t.Status != store.FeePending {
		return store.FeeTransfer{}, fmt.Errorf("order %s is %s, not in doubt: %w", r.OrderID, t.Status, store.ErrConflict)
	}
	if !s.InDoubt(t, now) {
		return store.FeeTransfer{}, automation.Errorf(automation.CodeConflict,
			"fee %s is PENDING since %s: its charge call may still be running; it is in doubt (and can be resolved) from %s",
			r.OrderID, t.UpdatedOn.UTC().Format(time.RFC3339), t.UpdatedOn.Add(s.inDoubtAfter()).UTC().Format(time.RFC3339))
	}
	if r.ExpectedRevision < 1 { // revisions start at 1: 0 would be an unguarded write
		return store.FeeTransfer{}, fmt.Errorf("fee %s: revision %d: %w", r.OrderID, r.ExpectedRevision, store.ErrLeaseLost)
	}
	res, err := s.Store.FeeTransferRecord(ctx, store.FeeTransferRecordParams{OrderID: r.OrderID, Status: r.Status, Now: now,
		Operator: op, Reason: reason, ExpectedRevision: r.ExpectedRevision, Error: "resolved by support: " + reason})
	if err != nil {
		return store.FeeTransfer{}, err
	}
	return res.Transfer, nil
}

// inDoubtAfter is InDoubtAfter, 2 minutes when unset.
func (s *Service) inDoubtAfter() time.Duration {
	if s.InDoubtAfter <= 0 {
		return 2 * time.Minute
	}
	return s.InDoubtAfter
}

// InDoubt reports whether a transfer's outcome is in doubt at now: UNKNOWN, or PENDING and
// untouched for InDoubtAfter (its charger crashed or stalled between recording the intent
// and the answer). Only such a fee is reconciled by the sweep, listed for a person or
// resolved by one (docs/budgets.md#reconciliation).
func (s *Service) InDoubt(t store.FeeTransfer, now time.Time) bool {
	switch t.Status {
	case store.FeeUnknown:
		return true
	case store.FeePending:
		return !t.UpdatedOn.After(now.Add(-s.inDoubtAfter()))
	}
	return false
}

// UnknownFees lists a unit's fees in doubt (InDoubt: UNKNOWN, and PENDING untouched for
// InDoubtAfter), oldest first (by Id), after Id `after`, at most limit. A PENDING fee whose
// charge call may still be running is not listed.
func (s *Service) UnknownFees(ctx context.Context, bu string, after int64, limit int) ([]store.FeeTransfer, error) {
	now := s.Clock.Now()
	unknown, err := s.Store.FeeTransferList(ctx, store.FeeTransferListParams{BusinessUnitID: bu, Statuses: []string{store.FeeUnknown},
		AfterID: after, Limit: limit})
	if err != nil {
		return nil, err
	}
	pending, err := s.Store.FeeTransferList(ctx, store.FeeTransferListParams{BusinessUnitID: bu, Statuses: []string{store.FeePending},
		UpdatedBefore: now.Add(-s.inDoubtAfter()), AfterID: after, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]store.FeeTransfer, 0, min(limit, len(unknown)+len(pending)))
	for len(out) < limit && (len(unknown) > 0 || len(pending) > 0) { // merge by Id
		if len(pending) == 0 || (len(unknown) > 0 && unknown[0].ID < pending[0].ID) {
			out, unknown = append(out, unknown[0]), unknown[1:]
		} else {
			out, pending = append(out, pending[0]), pending[1:]
		}
	}
	return out, nil
}

// Waiting lists a unit's WAITING_BUDGET commands, oldest first.
func (s *Service) Waiting(ctx context.Context, bu string, limit int) ([]store.BudgetWait, error) {
	return s.Store.BudgetWaitList(ctx, bu, limit)
}

// Reconciliation is the support comparison of one campaign's cost three ways; Differences
// lists each disagreement in words (empty when all agree).
type Reconciliation struct {
	BusinessUnitID string      `json:"businessUnitId"`
	CampaignID     string      `json:"campaignId"`
	BudgetCost     money.Minor `json:"budgetCost"`
	TransferCost   money.Minor `json:"transferCost"`
	ProjectedCost  money.Minor `json:"projectedCost"`
	Transfers      int64       `json:"succeededTransfers"`
	Projected      int64       `json:"projectedFees"`
	Differences    []string    `json:"differences"`
}

// Reconcile3 compares the budget's cost, the SUCCEEDED transfer records whose cost was added
// and the fee-fact projection of one campaign. The projection may lag (facts not yet
// relayed), which shows here as a difference until it catches up.
func (s *Service) Reconcile3(ctx context.Context, bu, campaign string) (Reconciliation, error) {
	if _, err := s.Store.BudgetGet(ctx, bu, campaign); err != nil {
		return Reconciliation{}, err
	}
	r, err := s.Store.FeeReconcile(ctx, bu, campaign)
	if err != nil {
		return Reconciliation{}, err
	}
	out := Reconciliation{BusinessUnitID: bu, CampaignID: campaign, BudgetCost: money.Minor(r.BudgetCost), TransferCost: money.Minor(r.TransferCost),
		ProjectedCost: money.Minor(r.ProjectedCost), Transfers: r.Transfers, Projected: r.Projected, Differences: []string{}}
	if r.BudgetCost != r.TransferCost {
		out.Differences = append(out.Differences, fmt.Sprintf("budget cost %d != transfer records %d", r.BudgetCost, r.TransferCost))
	}
	if r.ProjectedCost != r.TransferCost || r.Projected != r.Transfers {
		out.Differences = append(out.Differences, fmt.Sprintf("projection %d (%d fees) != transfer records %d (%d fees)", r.ProjectedCost, r.Projected, r.TransferCost, r.Transfers))
	}
	return out, nil
}

// FactStore is what the FeeProjector needs.
type FactStore interface {
	FeeFactApply(ctx context.Context, facts []store.CampaignFeeFact, now time.Time) (store.FeeFactApplyResult, error)
}

// FeeProjector keeps the fee projection from CampaignFeeFact messages (topic
// store.FeeFactsTopic): the highest revision per order, so facts delivered twice, replayed
// or out of order never double-count; cost per campaign and day = the SUCCEEDED fees.
type FeeProjector struct {
	Store FactStore
	Clock automation.Clock
}

// DecodeFeeFact decodes a fact strictly (unknown fields refused) and checks it.
func DecodeFeeFact(body []byte) (store.CampaignFeeFact, error) {
	var f store.CampaignFeeFact
	if err := strictjson.Decode(body, &f); err != nil {
		return f, fmt.Errorf("fee fact: %w", err) // strictjson.ErrTrailing: "fee fact: trailing data"
	}
	if f.OrderID == "" || f.CommandID == "" || f.BusinessUnitID == "" || f.CampaignID == "" || f.Revision <= 0 || f.Amount < 0 || f.OccurredOn.IsZero() {
		return f, fmt.Errorf("fee fact %q: orderId, commandId, businessUnitId, campaignId, revision > 0, amount >= 0 and occurredOn are required", f.EventID)
	}
	switch f.FeeStatus {
	case store.FeePending, store.FeeSucceeded, store.FeeFailed, store.FeeUnknown:
	default:
		return f, fmt.Errorf("fee fact %q: feeStatus %q", f.EventID, f.FeeStatus)
	}
	if _, err := money.ParseCurrency(f.Currency); err != nil {
		return f, fmt.Errorf("fee fact %q: %w", f.EventID, err)
	}
	if _, err := time.Parse("2006-01-02", f.Day); err != nil {
		return f, fmt.Errorf("fee fact %q: day %q", f.EventID, f.Day)
	}
	if f.EventID != store.FeeFactEventID(f.OrderID, f.Revision) {
		return f, fmt.Errorf("fee fact %q: eventId must be %q", f.EventID, store.FeeFactEventID(f.OrderID, f.Revision))
	}
	return f, nil
}

// Handle is the bus handler of store.FeeFactsTopic: a malformed fact is dead-lettered
// (automation.Permanent), a store failure retried (applying a fact twice is harmless).
func (p *FeeProjector) Handle(ctx context.Context, m bus.Message) error {
	f, err := DecodeFeeFact(m.Body)
	if err != nil {
		return automation.Permanent(fmt.Errorf("message %s: %w", m.ID, err))
	}
	_, err = p.Store.FeeFactApply(ctx, []store.CampaignFeeFact{f}, p.Clock.Now())
	return err
}
