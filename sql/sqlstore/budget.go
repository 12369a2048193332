package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

var _ store.BudgetStore = (*Store)(nil)

func named(kv ...any) []any {
	out := make([]any, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		out = append(out, sql.Named(kv[i].(string), kv[i+1]))
	}
	return out
}

func auditJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (s *Store) budgetAudit(ctx context.Context, tx *sql.Tx, now time.Time, a store.BudgetAuditRecord) error {
	_, err := s.execCount(ctx, tx, "BudgetAuditInsert", named("BusinessUnitId", a.BusinessUnitID, "CampaignId", a.CampaignID,
		"Subject", a.Subject, "Action", a.Action, "Operator", a.Operator, "Reason", a.Reason,
		"BeforeJson", a.Before, "AfterJson", a.After, "Now", s.tm(now))...)
	return err
}

// --- price policies --------------------------------------------------------------------

func (s *Store) scanPolicy(r rowScanner) (store.PricePolicy, error) {
	var p store.PricePolicy
	err := r.Scan(&p.BusinessUnitID, &p.ActionType, &p.Formula, &p.Rate, &p.Unit, &p.TransferType, &p.Currency, &p.MinFee, &p.MaxFee,
		ns(&p.ConvertTo), ns(&p.ConversionRate), &p.Version, s.t(&p.UpdatedOn), ns(&p.UpdatedBy))
	return p, err
}

func (s *Store) policyGet(ctx context.Context, tx *sql.Tx, bu, action string) (store.PricePolicy, error) {
	p, err := s.scanPolicy(s.queryRow(ctx, tx, "PricePolicyGet", named("BusinessUnitId", bu, "ActionType", action)...))
	return p, s.oneErr("PricePolicyGet", err)
}

// PricePolicyPut implements store.BudgetStore: insert or guarded replace, audited, in one transaction.
func (s *Store) PricePolicyPut(ctx context.Context, p store.PricePolicyPutParams) (store.PricePolicy, error) {
	pp := p.Policy
	if pp.BusinessUnitID == "" || pp.ActionType == "" {
		return store.PricePolicy{}, fmt.Errorf("%s PricePolicyPut: business unit and action type are required", s.d.Name)
	}
	var out store.PricePolicy
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		before, err := s.policyGet(ctx, tx, pp.BusinessUnitID, pp.ActionType)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		exists := err == nil
		args := named("BusinessUnitId", pp.BusinessUnitID, "ActionType", pp.ActionType, "Formula", pp.Formula, "Rate", pp.Rate,
			"Unit", pp.Unit, "TransferType", pp.TransferType, "Currency", pp.Currency, "MinFee", pp.MinFee, "MaxFee", pp.MaxFee,
			"ConvertTo", nstr(pp.ConvertTo), "ConversionRate", nstr(pp.ConversionRate), "Now", s.tm(p.Now), "Operator", nstr(p.Operator),
			"ExpectedVersion", p.ExpectedVersion)
		switch {
		case p.ExpectedVersion == 0 && exists:
			return fmt.Errorf("%s PricePolicyPut: policy %s exists: %w", s.d.Name, pp.ActionType, store.ErrConflict)
		case p.ExpectedVersion == 0:
			if _, err := s.execCount(ctx, tx, "PricePolicyInsert", args...); err != nil {
				return err
			}
		case !exists:
			return store.ErrNotFound
		default:
			if err := s.execOne(ctx, tx, "PricePolicyUpdate", args...); err != nil {
				return err
			}
		}
		out, err = s.policyGet(ctx, tx, pp.BusinessUnitID, pp.ActionType)
		if err != nil {
			return err
		}
		b := ""
		if exists {
			b = auditJSON(before)
		}
		return s.budgetAudit(ctx, tx, p.Now, store.BudgetAuditRecord{BusinessUnitID: pp.BusinessUnitID, Subject: "pricePolicy:" + pp.ActionType,
			Action: "PUT_POLICY", Operator: p.Operator, Before: b, After: auditJSON(out)})
	})
	return out, err
}

// PricePolicyGet implements store.BudgetStore.
func (s *Store) PricePolicyGet(ctx context.Context, bu, action string) (store.PricePolicy, error) {
	return s.policyGet(ctx, nil, bu, action)
}

// PricePolicyGetInTx implements store.BudgetStore.
func (s *Store) PricePolicyGetInTx(ctx context.Context, tx *sql.Tx, bu, action string) (store.PricePolicy, error) {
	if tx == nil {
		return store.PricePolicy{}, fmt.Errorf("%s PricePolicyGetInTx: a transaction is required", s.d.Name)
	}
	return s.policyGet(ctx, tx, bu, action)
}

// PricePolicyList implements store.BudgetStore.
func (s *Store) PricePolicyList(ctx context.Context, bu string) ([]store.PricePolicy, error) {
	return queryAll(ctx, s, nil, "PricePolicyList", s.scanPolicy, named("BusinessUnitId", bu)...)
}

// --- frozen prices ---------------------------------------------------------------------

func (s *Store) scanPrice(r rowScanner) (store.CommandPrice, error) {
	var p store.CommandPrice
	err := r.Scan(&p.CommandID, &p.BusinessUnitID, &p.CampaignID, &p.ActionType, &p.Amount, &p.Currency, &p.PriceJSON, s.t(&p.FrozenOn))
	return p, err
}

// CommandPriceFreeze implements store.BudgetStore.
func (s *Store) CommandPriceFreeze(ctx context.Context, p store.CommandPrice) (store.CommandPrice, error) {
	if p.CommandID == "" || p.Amount < 0 {
		return store.CommandPrice{}, fmt.Errorf("%s CommandPriceFreeze: command id and a non-negative amount are required", s.d.Name)
	}
	var out store.CommandPrice
	err := s.inTx(ctx, func(tx *sql.Tx) (err error) {
		out, err = s.commandPriceFreezeTx(ctx, tx, p)
		return err
	})
	return out, err
}

// CommandPriceFreezeInTx implements store.BudgetStore.
func (s *Store) CommandPriceFreezeInTx(ctx context.Context, tx *sql.Tx, p store.CommandPrice) (store.CommandPrice, error) {
	if p.CommandID == "" || p.Amount < 0 {
		return store.CommandPrice{}, fmt.Errorf("%s CommandPriceFreezeInTx: command id and a non-negative amount are required", s.d.Name)
	}
	return s.commandPriceFreezeTx(ctx, tx, p)
}

// commandPriceFreezeTx stores p first-writer-wins in tx and returns the stored price.
func (s *Store) commandPriceFreezeTx(ctx context.Context, tx *sql.Tx, p store.CommandPrice) (store.CommandPrice, error) {
	if _, err := s.execCount(ctx, tx, "CommandPriceInsert", named("CommandId", p.CommandID, "BusinessUnitId", p.BusinessUnitID,
		"CampaignId", p.CampaignID, "ActionType", p.ActionType, "Amount", p.Amount, "Currency", p.Currency,
		"PriceJson", p.PriceJSON, "Now", s.tm(p.FrozenOn))...); err != nil {
		return store.CommandPrice{}, err
	}
	out, err := s.scanPrice(s.queryRow(ctx, tx, "CommandPriceGet", named("CommandId", p.CommandID)...))
	return out, s.oneErr("CommandPriceGet", err)
}

// CommandPriceGet implements store.BudgetStore.
func (s *Store) CommandPriceGet(ctx context.Context, commandID string) (store.CommandPrice, error) {
	p, err := s.scanPrice(s.queryRow(ctx, nil, "CommandPriceGet", named("CommandId", commandID)...))
	return p, s.oneErr("CommandPriceGet", err)
}

// --- budgets ---------------------------------------------------------------------------

func (s *Store) scanBudget(r rowScanner) (store.CampaignBudget, error) {
	var b store.CampaignBudget
	err := r.Scan(&b.BusinessUnitID, &b.CampaignID, &b.Currency, &b.MaxCost, &b.Cost, &b.ReservedCost, &b.Status, ns(&b.PausedReason),
		&b.Version, s.t(&b.CreatedOn), s.t(&b.UpdatedOn))
	return b, err
}

func (s *Store) budgetGet(ctx context.Context, tx *sql.Tx, bu, campaign string) (store.CampaignBudget, error) {
	b, err := s.scanBudget(s.queryRow(ctx, tx, "BudgetGet", named("BusinessUnitId", bu, "CampaignId", campaign)...))
	return b, s.oneErr("BudgetGet", err)
}

// BudgetCreate implements store.BudgetStore.
func (s *Store) BudgetCreate(ctx context.Context, p store.BudgetCreateParams) (store.CampaignBudget, error) {
	if p.BusinessUnitID == "" || p.CampaignID == "" || p.Currency == "" || p.MaxCost < 0 {
		return store.CampaignBudget{}, fmt.Errorf("%s BudgetCreate: business unit, campaign, currency and maxCost >= 0 are required", s.d.Name)
	}
	var out store.CampaignBudget
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		n, err := s.execCount(ctx, tx, "BudgetInsert", named("BusinessUnitId", p.BusinessUnitID, "CampaignId", p.CampaignID,
			"Currency", p.Currency, "MaxCost", p.MaxCost, "Now", s.tm(p.Now))...)
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%s BudgetCreate: campaign %s has a budget: %w", s.d.Name, p.CampaignID, store.ErrConflict)
		}
		if out, err = s.budgetGet(ctx, tx, p.BusinessUnitID, p.CampaignID); err != nil {
			return err
		}
		return s.budgetAudit(ctx, tx, p.Now, store.BudgetAuditRecord{BusinessUnitID: p.BusinessUnitID, CampaignID: p.CampaignID,
			Subject: "budget", Action: "CREATE", Operator: p.Operator, Reason: p.Reason, After: auditJSON(out)})
	})
	return out, err
}

// BudgetGet implements store.BudgetStore.
func (s *Store) BudgetGet(ctx context.Context, bu, campaign string) (store.CampaignBudget, error) {
	return s.budgetGet(ctx, nil, bu, campaign)
}

// BudgetSetMaxCost implements store.BudgetStore: the guarded update; no row changed is told
// apart (not found, stale version, below the committed amount) by reading the row.
func (s *Store) BudgetSetMaxCost(ctx context.Context, p store.BudgetSetMaxCostParams) (store.CampaignBudget, error) {
	if p.MaxCost < 0 {
		return store.CampaignBudget{}, store.ErrBudgetShort
	}
	var out store.CampaignBudget
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		before, err := s.budgetGet(ctx, tx, p.BusinessUnitID, p.CampaignID)
		if err != nil {
			return err
		}
		n, err := s.execCount(ctx, tx, "BudgetSetMaxCost", named("BusinessUnitId", p.BusinessUnitID, "CampaignId", p.CampaignID,
			"MaxCost", p.MaxCost, "ExpectedVersion", p.ExpectedVersion, "Now", s.tm(p.Now))...)
		if err != nil {
			return err
		}
		if n != 1 {
			if before.Version != p.ExpectedVersion {
				return fmt.Errorf("%s BudgetSetMaxCost: %w", s.d.Name, store.ErrLeaseLost)
			}
			return fmt.Errorf("%s BudgetSetMaxCost: %d < cost %d + reserved %d: %w", s.d.Name, p.MaxCost, before.Cost, before.ReservedCost, store.ErrBudgetShort)
		}
		if out, err = s.budgetGet(ctx, tx, p.BusinessUnitID, p.CampaignID); err != nil {
			return err
		}
		return s.budgetAudit(ctx, tx, p.Now, store.BudgetAuditRecord{BusinessUnitID: p.BusinessUnitID, CampaignID: p.CampaignID,
			Subject: "budget", Action: "SET_MAX_COST", Operator: p.Operator, Reason: p.Reason, Before: auditJSON(before), After: auditJSON(out)})
	})
	return out, err
}

// BudgetSetStatus implements store.BudgetStore.
func (s *Store) BudgetSetStatus(ctx context.Context, p store.BudgetSetStatusParams) (store.CampaignBudget, error) {
	switch {
	case p.Status == store.BudgetActive && p.Reason == "":
	case p.Status == store.BudgetPaused && (p.Reason == store.ShortBudget || p.Reason == store.ShortBalance):
	default:
		return store.CampaignBudget{}, fmt.Errorf("%s BudgetSetStatus: status %q with reason %q", s.d.Name, p.Status, p.Reason)
	}
	var out store.CampaignBudget
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		before, err := s.budgetGet(ctx, tx, p.BusinessUnitID, p.CampaignID)
		if err != nil {
			return err
		}
		// 0 leaves the write unguarded only for the worker's own pauses (no Operator): a
		// person's change always names the version read, and versions start at 1.
		if (p.ExpectedVersion != 0 || p.Operator != "") && before.Version != p.ExpectedVersion {
			return fmt.Errorf("%s BudgetSetStatus: %w", s.d.Name, store.ErrLeaseLost)
		}
		n, err := s.execCount(ctx, tx, "BudgetSetStatus", named("BusinessUnitId", p.BusinessUnitID, "CampaignId", p.CampaignID,
			"Status", p.Status, "Reason", nstr(p.Reason), "ExpectedVersion", p.ExpectedVersion, "Now", s.tm(p.Now))...)
		if err != nil {
			return err
		}
		if out, err = s.budgetGet(ctx, tx, p.BusinessUnitID, p.CampaignID); err != nil {
			return err
		}
		if n == 0 || p.Operator == "" {
			return nil
		}
		action := "PAUSE"
		if p.Status == store.BudgetActive {
			action = "RESUME"
		}
		return s.budgetAudit(ctx, tx, p.Now, store.BudgetAuditRecord{BusinessUnitID: p.BusinessUnitID, CampaignID: p.CampaignID,
			Subject: "budget", Action: action, Operator: p.Operator, Reason: p.AuditReason, Before: auditJSON(before), After: auditJSON(out)})
	})
	return out, err
}

// --- reservations ----------------------------------------------------------------------

func (s *Store) scanReservation(r rowScanner) (store.BudgetReservation, error) {
	var v store.BudgetReservation
	err := r.Scan(&v.ID, &v.CommandID, &v.BusinessUnitID, &v.CampaignID, &v.Amount, &v.Currency, &v.Status, &v.Attempt, &v.OrderID,
		ns(&v.ActionStatus), s.t(&v.CreatedOn), s.t(&v.UpdatedOn))
	return v, err
}

func (s *Store) reservationGet(ctx context.Context, tx *sql.Tx, commandID string) (store.BudgetReservation, error) {
	v, err := s.scanReservation(s.queryRow(ctx, tx, "ReservationGet", named("CommandId", commandID)...))
	return v, s.oneErr("ReservationGet", err)
}

// reservationGetForUpdate reads the command's reservation and keeps it locked to the end of
// tx (SQL Server: UPDLOCK, HOLDLOCK; SQLite: the transaction already holds the write lock).
func (s *Store) reservationGetForUpdate(ctx context.Context, tx *sql.Tx, commandID string) (store.BudgetReservation, error) {
	v, err := s.scanReservation(s.queryRow(ctx, tx, "ReservationGetForUpdate", named("CommandId", commandID)...))
	return v, s.oneErr("ReservationGetForUpdate", err)
}

// BudgetReserve implements store.BudgetStore.
func (s *Store) BudgetReserve(ctx context.Context, p store.BudgetReserveParams) (store.BudgetReserveResult, error) {
	if p.CommandID == "" || p.Amount < 0 || p.OrderIDFor == nil {
		return store.BudgetReserveResult{}, fmt.Errorf("%s BudgetReserve: command id, amount >= 0 and OrderIDFor are required", s.d.Name)
	}
	var out store.BudgetReserveResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = store.BudgetReserveResult{}
		b, err := s.budgetGet(ctx, tx, p.BusinessUnitID, p.CampaignID)
		if err != nil {
			return err
		}
		if b.Currency != p.Currency {
			return fmt.Errorf("%s BudgetReserve: %s for a %s budget: %w", s.d.Name, p.Currency, b.Currency, store.ErrCurrencyMismatch)
		}
		r, err := s.reservationGet(ctx, tx, p.CommandID)
		switch {
		case err == nil && r.Status != store.ReservationReleased:
			out = store.BudgetReserveResult{Outcome: store.ReserveExisting, Reservation: r, Budget: b}
			return nil
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return err
		}
		exists := err == nil
		n, err := s.execCount(ctx, tx, "BudgetReserveAmount", named("BusinessUnitId", p.BusinessUnitID, "CampaignId", p.CampaignID,
			"Currency", p.Currency, "Amount", p.Amount, "Now", s.tm(p.Now))...)
		if err != nil {
			return err
		}
		if n != 1 {
			if _, err := s.execCount(ctx, tx, "BudgetWaitUpsert", named("CommandId", p.CommandID, "BusinessUnitId", p.BusinessUnitID,
				"CampaignId", p.CampaignID, "Reason", store.ShortBudget, "Amount", p.Amount, "Currency", p.Currency, "Now", s.tm(p.Now))...); err != nil {
				return err
			}
			if b.Status == store.BudgetActive {
				if _, err := s.execCount(ctx, tx, "BudgetSetStatus", named("BusinessUnitId", p.BusinessUnitID, "CampaignId", p.CampaignID,
					"Status", store.BudgetPaused, "Reason", store.ShortBudget, "ExpectedVersion", int64(0), "Now", s.tm(p.Now))...); err != nil {
					return err
				}
			}
			if b, err = s.budgetGet(ctx, tx, p.BusinessUnitID, p.CampaignID); err != nil {
				return err
			}
			out = store.BudgetReserveResult{Outcome: store.ReserveShort, Reservation: r, Budget: b}
			return nil
		}
		if exists {
			err = s.execOne(ctx, tx, "ReservationRehold", named("CommandId", p.CommandID, "Attempt", r.Attempt,
				"OrderId", p.OrderIDFor(r.Attempt+1), "Amount", p.Amount, "Now", s.tm(p.Now))...)
		} else {
			_, err = s.execCount(ctx, tx, "ReservationInsert", named("CommandId", p.CommandID, "BusinessUnitId", p.BusinessUnitID,
				"CampaignId", p.CampaignID, "Amount", p.Amount, "Currency", p.Currency, "OrderId", p.OrderIDFor(1), "Now", s.tm(p.Now))...)
		}
		if err != nil {
			return err
		}
		if _, err := s.execCount(ctx, tx, "BudgetWaitDelete", named("CommandId", p.CommandID)...); err != nil {
			return err
		}
		if r, err = s.reservationGet(ctx, tx, p.CommandID); err != nil {
			return err
		}
		if b, err = s.budgetGet(ctx, tx, p.BusinessUnitID, p.CampaignID); err != nil {
			return err
		}
		out = store.BudgetReserveResult{Outcome: store.ReserveHeld, Reservation: r, Budget: b}
		return nil
	})
	return out, err
}

// ReservationGet implements store.BudgetStore.
func (s *Store) ReservationGet(ctx context.Context, commandID string) (store.BudgetReservation, error) {
	return s.reservationGet(ctx, nil, commandID)
}

// ReservationRelease implements store.BudgetStore.
func (s *Store) ReservationRelease(ctx context.Context, p store.ReservationReleaseParams) (store.BudgetReservation, bool, error) {
	var out store.BudgetReservation
	var released bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, released, err = s.releaseIn(ctx, tx, p, false)
		return err
	})
	return out, released, err
}

// ReservationSettleInTx implements store.BudgetStore: ReservationRelease inside the caller's
// transaction, except that a reservation whose charge is PENDING or UNKNOWN records the
// action status and stays HELD without an error.
func (s *Store) ReservationSettleInTx(ctx context.Context, tx *sql.Tx, p store.ReservationReleaseParams) (store.BudgetReservation, bool, error) {
	return s.releaseIn(ctx, tx, p, true)
}

// releaseIn is ReservationRelease and ReservationSettleInTx inside tx. The budget is locked
// first (BudgetGet's UPDLOCK; the lock order budget → reservation → transfer of every budget
// transaction), and the reservation is read again under that lock (ReservationGetForUpdate)
// before anything is decided: the first, unlocked read only finds which budget to lock (a
// reservation's business unit and campaign never change). Deciding on the unlocked read
// would let a release that read attempt n act after another transaction released it and
// held attempt n+1: it would release the new hold and unreserve the old amount. The status
// change itself is guarded by the Attempt and OrderId read (ReservationSetStatus).
// p.Attempt, when set, names the attempt the caller acts on; another attempt is left alone.
func (s *Store) releaseIn(ctx context.Context, tx *sql.Tx, p store.ReservationReleaseParams, keepHeld bool) (store.BudgetReservation, bool, error) {
	r, err := s.reservationGet(ctx, tx, p.CommandID)
	if err != nil {
		return r, false, err
	}
	if _, err := s.budgetGet(ctx, tx, r.BusinessUnitID, r.CampaignID); err != nil {
		return r, false, err
	}
	if r, err = s.reservationGetForUpdate(ctx, tx, p.CommandID); err != nil {
		return r, false, err
	}
	if p.Attempt != 0 && p.Attempt != r.Attempt {
		return r, false, nil // the caller's attempt was released and another one held since
	}
	setAction := func() error {
		if p.ActionStatus == "" {
			return nil
		}
		if _, err := s.execCount(ctx, tx, "ReservationSetActionStatus", named("CommandId", p.CommandID, "ActionStatus", p.ActionStatus, "Now", s.tm(p.Now))...); err != nil {
			return err
		}
		r.ActionStatus = p.ActionStatus
		return nil
	}
	if r.Status != store.ReservationHeld {
		return r, false, setAction()
	}
	t, err := s.transferGet(ctx, tx, r.OrderID)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return r, false, err
	case t.Status != store.FeeFailed && keepHeld:
		return r, false, setAction()
	case t.Status != store.FeeFailed:
		return r, false, fmt.Errorf("%s ReservationRelease: order %s is %s, the reservation stays HELD: %w", s.d.Name, r.OrderID, t.Status, store.ErrConflict)
	}
	if err := s.release(ctx, tx, r, p.ActionStatus, p.Now); err != nil {
		return r, false, err
	}
	r, err = s.reservationGet(ctx, tx, p.CommandID)
	return r, err == nil, err
}

// release moves r from HELD to RELEASED and unreserves its amount, inside tx (which holds the
// budget's lock). ReservationSetStatus is guarded by r's Attempt and OrderId, so a stale r
// (another attempt held since) changes nothing and is ErrLeaseLost.
func (s *Store) release(ctx context.Context, tx *sql.Tx, r store.BudgetReservation, actionStatus string, now time.Time) error {
	if err := s.setReservationStatus(ctx, tx, r, store.ReservationReleased, nstr(actionStatus), now); err != nil {
		return err
	}
	return s.execOne(ctx, tx, "BudgetUnreserve", named("BusinessUnitId", r.BusinessUnitID, "CampaignId", r.CampaignID, "Amount", r.Amount, "Now", s.tm(now))...)
}

// setReservationStatus moves the HELD reservation r to status, guarded by the Attempt and
// OrderId r was read with: ErrLeaseLost when the row is no longer that attempt's hold.
func (s *Store) setReservationStatus(ctx context.Context, tx *sql.Tx, r store.BudgetReservation, status string, actionStatus any, now time.Time) error {
	return s.execOne(ctx, tx, "ReservationSetStatus", named("CommandId", r.CommandID, "Attempt", r.Attempt, "OrderId", r.OrderID,
		"Status", status, "ActionStatus", actionStatus, "Now", s.tm(now))...)
}

// ReservationSetActionStatus implements store.BudgetStore.
func (s *Store) ReservationSetActionStatus(ctx context.Context, commandID, actionStatus string, now time.Time) error {
	n, err := s.execCount(ctx, nil, "ReservationSetActionStatus", named("CommandId", commandID, "ActionStatus", nstr(actionStatus), "Now", s.tm(now))...)
	if err == nil && n == 0 {
		return store.ErrNotFound
	}
	return err
}

// ReservationStats implements store.BudgetStore.
func (s *Store) ReservationStats(ctx context.Context, bu, campaign string) (store.ReservationStats, error) {
	var st store.ReservationStats
	err := s.queryRow(ctx, nil, "ReservationStats", named("BusinessUnitId", bu, "CampaignId", campaign)...).Scan(&st.Held, &st.HeldAmount, s.nt(&st.OldestHeld))
	if err != nil {
		return st, fmt.Errorf("%s ReservationStats: %w", s.d.Name, err)
	}
	return st, nil
}

// --- transfers -------------------------------------------------------------------------

func (s *Store) scanTransfer(r rowScanner) (store.FeeTransfer, error) {
	var t store.FeeTransfer
	err := r.Scan(&t.ID, &t.OrderID, &t.CommandID, &t.ReservationID, &t.Attempt, &t.BusinessUnitID, &t.CampaignID, &t.Amount, &t.Currency,
		&t.TransferType, &t.Day, &t.Status, &t.CostAdded, ns(&t.ProviderReference), ns(&t.LastError), &t.Checks, &t.Revision,
		ns(&t.ResolvedBy), ns(&t.ResolutionReason), s.t(&t.CreatedOn), s.t(&t.UpdatedOn))
	return t, err
}

func (s *Store) transferGet(ctx context.Context, tx *sql.Tx, orderID string) (store.FeeTransfer, error) {
	t, err := s.scanTransfer(s.queryRow(ctx, tx, "FeeTransferGet", named("OrderId", orderID)...))
	return t, s.oneErr("FeeTransferGet", err)
}

func (s *Store) feeFact(ctx context.Context, tx *sql.Tx, t store.FeeTransfer, now time.Time) error {
	f := store.CampaignFeeFact{EventID: store.FeeFactEventID(t.OrderID, t.Revision), OrderID: t.OrderID, CommandID: t.CommandID,
		BusinessUnitID: t.BusinessUnitID, CampaignID: t.CampaignID, Revision: t.Revision, FeeStatus: t.Status, Amount: t.Amount,
		Currency: t.Currency, Day: t.Day, OccurredOn: ms(now)}
	body, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return s.outboxInsert(ctx, tx, now, store.OutboxMessage{MessageID: f.EventID, Destination: store.FeeFactsTopic, SessionID: t.CampaignID, Body: body})
}

// FeeTransferBegin implements store.BudgetStore.
func (s *Store) FeeTransferBegin(ctx context.Context, p store.FeeTransferBeginParams) (store.FeeTransfer, error) {
	if p.OrderID == "" || p.TransferType == "" || len(p.Day) != len("2006-01-02") {
		return store.FeeTransfer{}, fmt.Errorf("%s FeeTransferBegin: order id, transfer type and day are required", s.d.Name)
	}
	var out store.FeeTransfer
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// A locking read (FeeTransferGetForUpdate): of two concurrent begins of one order the
		// second waits here and then finds the first one's row, instead of both reading
		// nothing and the second failing on UQ_FeeTransfer_Order (SQL Server 2627).
		t, err := s.scanTransfer(s.queryRow(ctx, tx, "FeeTransferGetForUpdate", named("OrderId", p.OrderID)...))
		err = s.oneErr("FeeTransferGetForUpdate", err)
		if err == nil {
			if t.CommandID != p.CommandID {
				return fmt.Errorf("%s FeeTransferBegin: order %s belongs to another command: %w", s.d.Name, p.OrderID, store.ErrConflict)
			}
			out = t
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		r, err := s.reservationGet(ctx, tx, p.CommandID)
		if err != nil {
			return err
		}
		if r.Status != store.ReservationHeld || r.OrderID != p.OrderID {
			return fmt.Errorf("%s FeeTransferBegin: reservation of %s is %s for order %s: %w", s.d.Name, p.CommandID, r.Status, r.OrderID, store.ErrConflict)
		}
		if _, err := s.execCount(ctx, tx, "FeeTransferInsert", named("OrderId", p.OrderID, "CommandId", p.CommandID, "ReservationId", r.ID,
			"Attempt", r.Attempt, "BusinessUnitId", r.BusinessUnitID, "CampaignId", r.CampaignID, "Amount", r.Amount, "Currency", r.Currency,
			"TransferType", p.TransferType, "Day", p.Day, "Now", s.tm(p.Now))...); err != nil {
			return err
		}
		if out, err = s.transferGet(ctx, tx, p.OrderID); err != nil {
			return err
		}
		return s.feeFact(ctx, tx, out, p.Now)
	})
	return out, err
}

func feeFinal(status string) bool { return status == store.FeeSucceeded || status == store.FeeFailed }

// FeeTransferRecord implements store.BudgetStore: the transfer's change, the budget's and the
// reservation's, the fact and the audit, in one transaction.
func (s *Store) FeeTransferRecord(ctx context.Context, p store.FeeTransferRecordParams) (store.FeeTransferRecordResult, error) {
	switch p.Status {
	case store.FeeSucceeded, store.FeeFailed, store.FeeUnknown:
	default:
		return store.FeeTransferRecordResult{}, fmt.Errorf("%s FeeTransferRecord: status %q cannot be recorded", s.d.Name, p.Status)
	}
	var out store.FeeTransferRecordResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = store.FeeTransferRecordResult{}
		t, err := s.transferGet(ctx, tx, p.OrderID)
		if err != nil {
			return err
		}
		// 0 leaves the write unguarded only for a record without an Operator: a person's
		// resolution always names the revision read, and revisions start at 1.
		if (p.ExpectedRevision != 0 || p.Operator != "") && t.Revision != p.ExpectedRevision {
			return fmt.Errorf("%s FeeTransferRecord: %w", s.d.Name, store.ErrLeaseLost)
		}
		if _, err := s.budgetGet(ctx, tx, t.BusinessUnitID, t.CampaignID); err != nil { // lock order: budget first
			return err
		}
		r, err := s.reservationGet(ctx, tx, t.CommandID)
		if err != nil {
			return err
		}
		if feeFinal(t.Status) {
			if t.Status != p.Status {
				return fmt.Errorf("%s FeeTransferRecord: order %s is %s, not %s: %w", s.d.Name, p.OrderID, t.Status, p.Status, store.ErrConflict)
			}
			out = store.FeeTransferRecordResult{Transfer: t, Reservation: r}
			return nil
		}
		changed := t.Status != p.Status
		rev := t.Revision
		if changed {
			rev++
		}
		costAdded := t.CostAdded
		if p.Status == store.FeeSucceeded && !t.CostAdded {
			costAdded = true
		}
		if err := s.execOne(ctx, tx, "FeeTransferUpdate", named("OrderId", p.OrderID, "Revision", t.Revision, "NewRevision", rev,
			"Status", p.Status, "CostAdded", boolInt(costAdded), "ProviderReference", nstr(p.ProviderReference), "LastError", nstr(p.Error),
			"ResolvedBy", nstr(p.Operator), "ResolutionReason", nstr(p.Reason), "Now", s.tm(p.Now))...); err != nil {
			return err
		}
		// The reservation of this order moves only if it is the reservation's current order and HELD.
		current := r.Status == store.ReservationHeld && r.OrderID == t.OrderID
		switch {
		case p.Status == store.FeeSucceeded && !t.CostAdded:
			if !current {
				return fmt.Errorf("%s FeeTransferRecord: order %s succeeded but reservation of %s is %s: %w", s.d.Name, t.OrderID, r.CommandID, r.Status, store.ErrConflict)
			}
			if err := s.execOne(ctx, tx, "BudgetConsume", named("BusinessUnitId", t.BusinessUnitID, "CampaignId", t.CampaignID, "Amount", t.Amount, "Now", s.tm(p.Now))...); err != nil {
				return err
			}
			if err := s.setReservationStatus(ctx, tx, r, store.ReservationConsumed, nil, p.Now); err != nil {
				return err
			}
		case p.Status == store.FeeFailed && current:
			if err := s.release(ctx, tx, r, "", p.Now); err != nil {
				return err
			}
		}
		if out.Transfer, err = s.transferGet(ctx, tx, p.OrderID); err != nil {
			return err
		}
		if out.Reservation, err = s.reservationGet(ctx, tx, t.CommandID); err != nil {
			return err
		}
		out.Changed = changed
		if changed {
			if err := s.feeFact(ctx, tx, out.Transfer, p.Now); err != nil {
				return err
			}
		}
		if p.Operator != "" {
			return s.budgetAudit(ctx, tx, p.Now, store.BudgetAuditRecord{BusinessUnitID: t.BusinessUnitID, CampaignID: t.CampaignID,
				Subject: "fee:" + t.OrderID, Action: "RESOLVE_FEE", Operator: p.Operator, Reason: p.Reason, Before: auditJSON(t), After: auditJSON(out.Transfer)})
		}
		return nil
	})
	return out, err
}

// FeeTransferGet implements store.BudgetStore.
func (s *Store) FeeTransferGet(ctx context.Context, orderID string) (store.FeeTransfer, error) {
	return s.transferGet(ctx, nil, orderID)
}

// FeeTransferList implements store.BudgetStore.
func (s *Store) FeeTransferList(ctx context.Context, p store.FeeTransferListParams) ([]store.FeeTransfer, error) {
	if err := checkLimit("FeeTransferList", p.Limit); err != nil {
		return nil, err
	}
	if len(p.Statuses) == 0 || len(p.Statuses) > 4 {
		return nil, fmt.Errorf("%s FeeTransferList: 1 to 4 statuses", s.d.Name)
	}
	st := make([]string, 4)
	for i := range st {
		st[i] = p.Statuses[min(i, len(p.Statuses)-1)]
	}
	before := p.UpdatedBefore
	if before.IsZero() {
		before = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return queryAll(ctx, s, nil, "FeeTransferList", s.scanTransfer, named("S1", st[0], "S2", st[1], "S3", st[2], "S4", st[3],
		"AfterId", p.AfterID, "UpdatedBefore", s.tm(before), "BusinessUnitId", p.BusinessUnitID, "Limit", p.Limit)...)
}

// --- waiting list ----------------------------------------------------------------------

// BudgetWaitPut implements store.BudgetStore.
func (s *Store) BudgetWaitPut(ctx context.Context, w store.BudgetWait) error {
	if w.Reason != store.ShortBudget && w.Reason != store.ShortBalance {
		return fmt.Errorf("%s BudgetWaitPut: reason %q", s.d.Name, w.Reason)
	}
	_, err := s.execCount(ctx, nil, "BudgetWaitUpsert", named("CommandId", w.CommandID, "BusinessUnitId", w.BusinessUnitID,
		"CampaignId", w.CampaignID, "Reason", w.Reason, "Amount", w.Amount, "Currency", w.Currency, "Now", s.tm(w.Since))...)
	return err
}

// BudgetWaitGet implements store.BudgetStore.
func (s *Store) BudgetWaitGet(ctx context.Context, commandID string) (store.BudgetWait, error) {
	var w store.BudgetWait
	err := s.queryRow(ctx, nil, "BudgetWaitGet", named("CommandId", commandID)...).
		Scan(&w.CommandID, &w.BusinessUnitID, &w.CampaignID, &w.Reason, &w.Amount, &w.Currency, s.t(&w.Since))
	return w, s.oneErr("BudgetWaitGet", err)
}

// BudgetWaitList implements store.BudgetStore.
func (s *Store) BudgetWaitList(ctx context.Context, bu string, limit int) ([]store.BudgetWait, error) {
	return queryPage(ctx, s, "BudgetWaitList", limit, func(r rowScanner) (store.BudgetWait, error) {
		var w store.BudgetWait
		err := r.Scan(&w.CommandID, &w.BusinessUnitID, &w.CampaignID, &w.Reason, &w.Amount, &w.Currency, s.t(&w.Since))
		return w, err
	}, named("BusinessUnitId", bu, "Limit", limit)...)
}

// --- fee facts -------------------------------------------------------------------------

// FeeFactApply implements store.BudgetStore.
func (s *Store) FeeFactApply(ctx context.Context, facts []store.CampaignFeeFact, now time.Time) (store.FeeFactApplyResult, error) {
	if len(facts) > store.MaxBatch {
		return store.FeeFactApplyResult{}, fmt.Errorf("%s FeeFactApply: %d facts > %d", s.d.Name, len(facts), store.MaxBatch)
	}
	var out store.FeeFactApplyResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = store.FeeFactApplyResult{}
		for _, f := range facts {
			n, err := s.execCount(ctx, tx, "FeeProjectionUpsert", named("OrderId", f.OrderID, "CommandId", f.CommandID,
				"BusinessUnitId", f.BusinessUnitID, "CampaignId", f.CampaignID, "Revision", f.Revision, "FeeStatus", f.FeeStatus,
				"Amount", f.Amount, "Currency", f.Currency, "Day", f.Day, "Now", s.tm(now))...)
			if err != nil {
				return err
			}
			if n > 0 {
				out.Applied++
			} else {
				out.Stale++
			}
		}
		return nil
	})
	return out, err
}

// FeeCostByDay implements store.BudgetStore.
func (s *Store) FeeCostByDay(ctx context.Context, bu, campaign, fromDay, toDay string) ([]store.FeeDayCost, error) {
	return queryAll(ctx, s, nil, "FeeCostByDay", func(r rowScanner) (store.FeeDayCost, error) {
		var d store.FeeDayCost
		err := r.Scan(&d.Day, &d.Cost, &d.Fees, &d.Currency)
		return d, err
	}, named("BusinessUnitId", bu, "CampaignId", campaign, "FromDay", fromDay, "ToDay", toDay)...)
}

// FeeReconcile implements store.BudgetStore.
func (s *Store) FeeReconcile(ctx context.Context, bu, campaign string) (store.FeeReconciliation, error) {
	var r store.FeeReconciliation
	err := s.queryRow(ctx, nil, "FeeReconcile", named("BusinessUnitId", bu, "CampaignId", campaign)...).
		Scan(&r.BudgetCost, &r.TransferCost, &r.ProjectedCost, &r.Transfers, &r.Projected)
	if err != nil {
		return r, fmt.Errorf("%s FeeReconcile: %w", s.d.Name, err)
	}
	return r, nil
}

// BudgetAuditList implements store.BudgetStore.
func (s *Store) BudgetAuditList(ctx context.Context, bu, campaign string, limit int) ([]store.BudgetAuditRecord, error) {
	return queryPage(ctx, s, "BudgetAuditList", limit, func(r rowScanner) (store.BudgetAuditRecord, error) {
		var a store.BudgetAuditRecord
		err := r.Scan(&a.ID, &a.BusinessUnitID, &a.CampaignID, &a.Subject, &a.Action, &a.Operator, &a.Reason, &a.Before, &a.After, s.t(&a.CreatedOn))
		return a, err
	}, named("BusinessUnitId", bu, "CampaignId", campaign, "Limit", limit)...)
}
