package budget

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/store"
)

// PricedActionTypes are the action types the previous platform charged a fee for (the
// product's v1 transfer flow, docs/budgets.md#price-policy): a command of one of these types
// cannot run without a price policy for its business unit.
var PricedActionTypes = []string{"TOP_UP", "ADD_MONEY", "ADD_DATA", "ADD_PROMOTION", "ADD_SMS", "ADD_CALL_MINUTES",
	"NOTIFICATION_SMS", "NOTIFICATION_MAIL", "ADD_UPOINT"}

// FreeActionTypes are known action types that are free unless a policy prices them.
var FreeActionTypes = []string{"NOTIFICATION_WEBHOOK", "NOTIFICATION_INBOX", "NOTIFICATION_LOG",
	"NOTIFICATION_PUSH", "NOTIFICATION_WHATSAPP", "RENEW_LAOTV"}

// DefaultKnownActionType reports whether t is in PricedActionTypes or FreeActionTypes.
func DefaultKnownActionType(t string) bool {
	return slices.Contains(PricedActionTypes, t) || slices.Contains(FreeActionTypes, t)
}

// Fee formulas. Rate is an exact decimal; Quantity is the command's count in the policy's
// Unit (an exact non-negative decimal).
const (
	FormulaFixed   = "FIXED"    // fee = Rate minor units per command (Quantity ignored)
	FormulaPerUnit = "PER_UNIT" // fee = Quantity × Rate minor units
	FormulaPercent = "PERCENT"  // fee = Quantity × Rate / 100 (Quantity: the action's value in minor units)
)

// Policy is a validated price policy (see PolicyInput for the rules).
type Policy struct {
	BusinessUnitID string
	ActionType     string
	Formula        string
	Rate           decimal.Decimal
	Unit           string
	TransferType   string
	Currency       money.Currency
	MinFee, MaxFee money.Minor // in Currency; 0 = none
	ConvertTo      money.Currency
	ConversionRate decimal.Decimal
	Version        int64
}

// PolicyInput is a price policy as an API or a seed sends it. JSON:
//
//	{"formula":"PER_UNIT","rate":"12.5","unit":"SMS","transferType":"SMS_FEE","currency":"USD",
//	 "minFee":"0","maxFee":"0","convertTo":"LAK","conversionRate":"21000"}
type PolicyInput struct {
	Formula        string      `json:"formula"`
	Rate           string      `json:"rate"`
	Unit           string      `json:"unit"`
	TransferType   string      `json:"transferType"`
	Currency       string      `json:"currency"`
	MinFee         money.Minor `json:"minFee"`
	MaxFee         money.Minor `json:"maxFee"`
	ConvertTo      string      `json:"convertTo,omitempty"`
	ConversionRate string      `json:"conversionRate,omitempty"`
}

// ValidatePolicy checks an input for business unit bu and action type t. known reports the
// action types the platform knows (nil: DefaultKnownActionType). Errors are
// automation.CodeInvalidInput naming each bad field: an unknown action type, formula or
// currency, a rate that is not an exact non-negative decimal or is above money.MaxMinor, minFee > maxFee, a conversion
// without a positive rate or to the policy's own currency, an empty unit or transfer type.
func ValidatePolicy(bu, t string, in PolicyInput, known func(string) bool) (store.PricePolicy, error) {
	if known == nil {
		known = DefaultKnownActionType
	}
	var errs []error
	if !known(t) {
		errs = append(errs, automation.Invalid("actionType", "%q is not a known action type", t))
	}
	switch in.Formula {
	case FormulaFixed, FormulaPerUnit, FormulaPercent:
	default:
		errs = append(errs, automation.Invalid("formula", "%q is not FIXED, PER_UNIT or PERCENT", in.Formula))
	}
	if r, err := money.ParseDecimal("rate", in.Rate); err != nil {
		errs = append(errs, err)
	} else if r.GreaterThan(decimal.NewFromInt(money.MaxMinor)) {
		// One command's fee (FIXED), one unit's (PER_UNIT) or the percentage (PERCENT) above
		// the bound of every amount could never be charged: refused here, not at run time.
		errs = append(errs, automation.Invalid("rate", "%s is above %d, the bound of every amount in minor units (money.MaxMinor)", in.Rate, money.MaxMinor))
	}
	if strings.TrimSpace(in.Unit) == "" || len(in.Unit) > 50 {
		errs = append(errs, automation.Invalid("unit", "is required (at most 50 characters)"))
	}
	if strings.TrimSpace(in.TransferType) == "" || len(in.TransferType) > 100 {
		errs = append(errs, automation.Invalid("transferType", "is required (at most 100 characters)"))
	}
	cur, err := money.ParseCurrency(in.Currency)
	if err != nil {
		errs = append(errs, err)
	}
	if err := in.MinFee.Check("minFee"); err != nil {
		errs = append(errs, err)
	}
	if err := in.MaxFee.Check("maxFee"); err != nil {
		errs = append(errs, err)
	}
	if in.MaxFee > 0 && in.MinFee > in.MaxFee {
		errs = append(errs, automation.Invalid("minFee", "%s is above maxFee %s", in.MinFee, in.MaxFee))
	}
	if in.ConvertTo != "" || in.ConversionRate != "" {
		to, err := money.ParseCurrency(in.ConvertTo)
		if err != nil {
			errs = append(errs, automation.Invalid("convertTo", "%v", err))
		} else if to == cur {
			errs = append(errs, automation.Invalid("convertTo", "is the policy's own currency"))
		}
		if r, err := money.ParseDecimal("conversionRate", in.ConversionRate); err != nil {
			errs = append(errs, err)
		} else if !r.IsPositive() {
			errs = append(errs, automation.Invalid("conversionRate", "must be positive"))
		}
	}
	if len(errs) > 0 {
		return store.PricePolicy{}, automation.InvalidFields(errs...)
	}
	return store.PricePolicy{BusinessUnitID: bu, ActionType: t, Formula: in.Formula, Rate: in.Rate, Unit: in.Unit, TransferType: in.TransferType,
		Currency: in.Currency, MinFee: int64(in.MinFee), MaxFee: int64(in.MaxFee), ConvertTo: in.ConvertTo, ConversionRate: in.ConversionRate}, nil
}

// PolicyFromStore parses a stored policy (validated when it was saved).
func PolicyFromStore(p store.PricePolicy) (Policy, error) {
	cur, err := money.ParseCurrency(p.Currency)
	if err != nil {
		return Policy{}, err
	}
	rate, err := money.ParseDecimal("rate", p.Rate)
	if err != nil {
		return Policy{}, err
	}
	out := Policy{BusinessUnitID: p.BusinessUnitID, ActionType: p.ActionType, Formula: p.Formula, Rate: rate, Unit: p.Unit,
		TransferType: p.TransferType, Currency: cur, MinFee: money.Minor(p.MinFee), MaxFee: money.Minor(p.MaxFee), Version: p.Version}
	if p.ConvertTo != "" {
		if out.ConvertTo, err = money.ParseCurrency(p.ConvertTo); err != nil {
			return Policy{}, err
		}
		if out.ConversionRate, err = money.ParseDecimal("conversionRate", p.ConversionRate); err != nil {
			return Policy{}, err
		}
	}
	return out, nil
}

// Fee computes the fee of one command with quantity q (an exact non-negative decimal
// string; "" = 1) under the policy: the formula's exact result, clamped to [MinFee, MaxFee]
// (MaxFee 0 = no cap), converted when the policy names a conversion, then rounded ONCE with
// money.RoundHalfUp to a whole minor unit of the final currency.
func (p Policy) Fee(q string) (money.Amount, error) {
	qty := decimal.NewFromInt(1)
	if q != "" {
		var err error
		if qty, err = money.ParseDecimal("quantity", q); err != nil {
			return money.Amount{}, err
		}
	}
	var exact decimal.Decimal
	switch p.Formula {
	case FormulaFixed:
		exact = p.Rate
	case FormulaPerUnit:
		exact = qty.Mul(p.Rate)
	case FormulaPercent:
		exact = qty.Mul(p.Rate).Div(decimal.NewFromInt(100))
	default:
		return money.Amount{}, automation.Invalid("formula", "%q is not a formula", p.Formula)
	}
	if min := decimal.NewFromInt(int64(p.MinFee)); exact.LessThan(min) {
		exact = min
	}
	if p.MaxFee > 0 {
		if max := decimal.NewFromInt(int64(p.MaxFee)); exact.GreaterThan(max) {
			exact = max
		}
	}
	cur := p.Currency
	if !p.ConvertTo.IsZero() {
		exact = exact.Mul(p.ConversionRate).Shift(int32(p.ConvertTo.Exponent() - p.Currency.Exponent()))
		cur = p.ConvertTo
	}
	m, err := money.RoundHalfUp("fee", exact)
	if err != nil {
		return money.Amount{}, err
	}
	return money.Amount{Minor: m, Currency: cur}, nil
}

// FrozenPrice is a command's price as frozen on its first claim: persisted with the command
// (JSON below) and in CommandPrice, so a retry never re-prices. Priced false = free.
//
//	{"actionType":"ADD_SMS","priced":true,"amount":"13","currency":"USD","formula":"PER_UNIT",
//	 "rate":"12.5","unit":"SMS","quantity":"1","transferType":"SMS_FEE","policyVersion":2,
//	 "frozenOn":"2026-10-01T00:00:00Z"}
type FrozenPrice struct {
	ActionType    string      `json:"actionType"`
	Priced        bool        `json:"priced"`
	Amount        money.Minor `json:"amount"`
	Currency      string      `json:"currency,omitempty"`
	Formula       string      `json:"formula,omitempty"`
	Rate          string      `json:"rate,omitempty"`
	Unit          string      `json:"unit,omitempty"`
	Quantity      string      `json:"quantity,omitempty"`
	TransferType  string      `json:"transferType,omitempty"`
	PolicyVersion int64       `json:"policyVersion,omitempty"`
	FrozenOn      time.Time   `json:"frozenOn"`
}

// ErrNoPricePolicy: a priced action type has no policy in the business unit (a
// configuration error: the command cannot run until one is saved; automation.CodeConflict).
var ErrNoPricePolicy error = &automation.Error{Code: automation.CodeConflict, Message: "budget: the action type is priced but the business unit has no price policy"}

// FreezePrice returns the command's frozen price: the stored one when the command was
// priced before (a retry never re-prices), else the price of the current policy, stored
// first-writer-wins. Errors: ErrNoPricePolicy, automation.CodeInvalidInput for a bad
// quantity, store errors.
func (s *Service) FreezePrice(ctx context.Context, cmd Command) (FrozenPrice, error) {
	if err := cmd.check(); err != nil {
		return FrozenPrice{}, err
	}
	if got, err := s.Store.CommandPriceGet(ctx, cmd.CommandID); err == nil {
		return decodePrice(got)
	} else if !errors.Is(err, store.ErrNotFound) {
		return FrozenPrice{}, err
	}
	sp, found, err := s.policyOf(ctx, cmd.BusinessUnitID, cmd.ActionType)
	if err != nil {
		return FrozenPrice{}, err
	}
	row, err := priceRow(cmd, sp, found, s.Clock.Now())
	if err != nil {
		return FrozenPrice{}, err
	}
	stored, err := s.Store.CommandPriceFreeze(ctx, row)
	if err != nil {
		return FrozenPrice{}, err
	}
	return decodePrice(stored)
}

// FreezeInClaim returns the price freeze of a command of actionType in businessUnitID, to
// run inside the transaction that claims it (the campaign worker's claim: one write
// transaction for both, docs/budgets.md "Frozen price"). The policy is read in that
// transaction (store.BudgetStore.PricePolicyGetInTx), so the price frozen is the policy in
// force at the claim's instant, the row's FrozenOn: a policy saved between the worker's
// reads and its claim is the one used, never an older version stamped after it. The price is
// computed from the claimed command's quantity and stored first-writer-wins with the claim.
// A command whose price cannot be computed there (a priced type without a policy, a bad
// quantity) is left unpriced, so that Prepare answers its error as before. Errors of the
// returned func: the store's only (the policy's read, the freeze), which fail the claim.
func (s *Service) FreezeInClaim(businessUnitID, actionType string) func(ctx context.Context, tx *sql.Tx, cmd Command) error {
	return func(ctx context.Context, tx *sql.Tx, cmd Command) error {
		if cmd.ActionType != actionType || cmd.BusinessUnitID != businessUnitID || cmd.check() != nil {
			return nil
		}
		sp, err := s.Store.PricePolicyGetInTx(ctx, tx, businessUnitID, actionType)
		found := err == nil
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		row, err := priceRow(cmd, sp, found, s.Clock.Now())
		if err != nil {
			return nil // Prepare prices it and answers the error
		}
		_, err = s.Store.CommandPriceFreezeInTx(ctx, tx, row)
		return err
	}
}

// policyOf reads the business unit's price policy for actionType; found false: none.
func (s *Service) policyOf(ctx context.Context, businessUnitID, actionType string) (store.PricePolicy, bool, error) {
	sp, err := s.Store.PricePolicyGet(ctx, businessUnitID, actionType)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.PricePolicy{}, false, nil
	case err != nil:
		return store.PricePolicy{}, false, err
	}
	return sp, true, nil
}

// priceRow is cmd's price under the policy sp (found false: none; free unless the type is
// one of PricedActionTypes, ErrNoPricePolicy then) at now, as the CommandPrice row to freeze.
func priceRow(cmd Command, sp store.PricePolicy, found bool, now time.Time) (store.CommandPrice, error) {
	fp := FrozenPrice{ActionType: cmd.ActionType, FrozenOn: now}
	switch {
	case !found && slices.Contains(PricedActionTypes, cmd.ActionType):
		return store.CommandPrice{}, fmt.Errorf("%s in %s: %w", cmd.ActionType, cmd.BusinessUnitID, ErrNoPricePolicy)
	case !found:
		// free: nothing to charge
	default:
		p, err := PolicyFromStore(sp)
		if err != nil {
			return store.CommandPrice{}, err
		}
		fee, err := p.Fee(cmd.Quantity)
		if err != nil {
			return store.CommandPrice{}, err
		}
		fp = FrozenPrice{ActionType: cmd.ActionType, Priced: true, Amount: fee.Minor, Currency: fee.Currency.Code(), Formula: p.Formula,
			Rate: sp.Rate, Unit: p.Unit, Quantity: cmd.Quantity, TransferType: p.TransferType, PolicyVersion: p.Version, FrozenOn: now}
	}
	body, _ := json.Marshal(fp)
	return store.CommandPrice{CommandID: cmd.CommandID, BusinessUnitID: cmd.BusinessUnitID,
		CampaignID: cmd.CampaignID, ActionType: cmd.ActionType, Amount: int64(fp.Amount), Currency: fp.Currency, PriceJSON: string(body), FrozenOn: now}, nil
}

func decodePrice(c store.CommandPrice) (FrozenPrice, error) {
	var fp FrozenPrice
	if err := json.Unmarshal([]byte(c.PriceJSON), &fp); err != nil {
		return FrozenPrice{}, fmt.Errorf("budget: frozen price of %s: %w", c.CommandID, err)
	}
	return fp, nil
}
