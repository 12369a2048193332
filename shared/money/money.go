package money

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
	"golang.org/x/text/currency"

	"github.com/automation-platform/automation/shared/automation"
)

// MaxMinor bounds every amount, in minor units: 10^15 (a quadrillion). Sums of many amounts
// stay far below math.MaxInt64, so SQL additions cannot overflow.
const MaxMinor int64 = 1_000_000_000_000_000

// Currency is a validated ISO 4217 code ("USD", "LAK", "VND"). The zero value is invalid.
type Currency struct {
	code     string
	exponent int
}

// ParseCurrency validates an ISO 4217 code: exactly three upper-case ASCII letters known to
// golang.org/x/text/currency that name money. The codes that library sets apart as
// "undefined and testing" (XXX, XTS) and as precious metals (XAU, XAG, XPT, XPD, counted in
// troy ounces, not minor units) are refused. Errors are automation.Invalid on field "currency".
func ParseCurrency(code string) (Currency, error) {
	if len(code) != 3 || strings.ToUpper(code) != code {
		return Currency{}, automation.Invalid("currency", "%q is not a three-letter upper-case ISO 4217 code", code)
	}
	u, err := currency.ParseISO(code)
	if err != nil || u.String() != code {
		return Currency{}, automation.Invalid("currency", "%q is not an ISO 4217 currency", code)
	}
	switch u {
	case currency.XXX, currency.XTS, currency.XAU, currency.XAG, currency.XPT, currency.XPD:
		return Currency{}, automation.Invalid("currency", "%q is an ISO 4217 code but not a currency amounts can be in", code)
	}
	scale, _ := currency.Standard.Rounding(u)
	return Currency{code: code, exponent: scale}, nil
}

// MustCurrency is ParseCurrency for constants in tests and defaults; it panics on a bad code.
func MustCurrency(code string) Currency {
	c, err := ParseCurrency(code)
	if err != nil {
		panic(err)
	}
	return c
}

// Code returns the ISO 4217 code ("" for the zero Currency).
func (c Currency) Code() string { return c.code }

// Exponent returns the number of minor-unit digits (USD 2: 1 USD = 100 minor units).
func (c Currency) Exponent() int { return c.exponent }

// IsZero reports the zero (invalid) Currency.
func (c Currency) IsZero() bool { return c.code == "" }

func (c Currency) String() string { return c.code }

// MarshalJSON writes the code as a JSON string.
func (c Currency) MarshalJSON() ([]byte, error) { return json.Marshal(c.code) }

// UnmarshalJSON reads and validates a code.
func (c *Currency) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return automation.Invalid("currency", "must be a string")
	}
	v, err := ParseCurrency(s)
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// Minor is a non-negative count of minor units. In JSON it is a decimal string ("1500");
// an integer number (1500) is also accepted on input. Anything else — a sign, a fraction, an
// exponent, a float, more than MaxMinor — is refused.
type Minor int64

// ParseMinor parses a decimal string of minor units: digits only, no sign, no leading zero
// (except "0"), at most MaxMinor. Errors are automation.Invalid on field.
func ParseMinor(field, s string) (Minor, error) {
	if s == "" {
		return 0, automation.Invalid(field, "is required (a whole number of minor units, as a string)")
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, automation.Invalid(field, "%q has a leading zero", s)
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, automation.Invalid(field, "%q is not a non-negative whole number of minor units", s)
		}
	}
	if len(s) > 16 {
		return 0, automation.Invalid(field, "%q exceeds %d", s, MaxMinor)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v > MaxMinor {
		return 0, automation.Invalid(field, "%q exceeds %d", s, MaxMinor)
	}
	return Minor(v), nil
}

// Check returns an error when m is negative or above MaxMinor.
func (m Minor) Check(field string) error {
	if m < 0 || int64(m) > MaxMinor {
		return automation.Invalid(field, "%d is outside 0..%d minor units", m, MaxMinor)
	}
	return nil
}

func (m Minor) String() string { return strconv.FormatInt(int64(m), 10) }

// MarshalJSON writes the amount as a JSON string of minor units.
func (m Minor) MarshalJSON() ([]byte, error) { return []byte(`"` + m.String() + `"`), nil }

// UnmarshalJSON accepts a string of digits or an integer JSON number (no fraction, no
// exponent, no sign). The error is automation.Invalid on field "amount"; callers naming a
// field use ParseMinor.
func (m *Minor) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return automation.Invalid("amount", "is not a string")
		}
		s = str
	}
	v, err := ParseMinor("amount", s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Amount is Minor units of Currency.
type Amount struct {
	Minor    Minor    `json:"amount"`
	Currency Currency `json:"currency"`
}

// New returns an amount after checking its range and currency.
func New(minor int64, c Currency) (Amount, error) {
	if c.IsZero() {
		return Amount{}, automation.Invalid("currency", "is required")
	}
	if err := Minor(minor).Check("amount"); err != nil {
		return Amount{}, err
	}
	return Amount{Minor: Minor(minor), Currency: c}, nil
}

// Add returns a+b; an error when the currencies differ or the sum exceeds MaxMinor.
func Add(a, b Amount) (Amount, error) {
	if a.Currency != b.Currency {
		return Amount{}, automation.Invalid("currency", "cannot add %s to %s", b.Currency, a.Currency)
	}
	if a.Minor > Minor(MaxMinor)-b.Minor {
		return Amount{}, automation.Invalid("amount", "sum exceeds the largest amount")
	}
	return Amount{Minor: a.Minor + b.Minor, Currency: a.Currency}, nil
}

// Sub returns a-b; an error when the currencies differ or b > a.
func Sub(a, b Amount) (Amount, error) {
	if a.Currency != b.Currency {
		return Amount{}, automation.Invalid("currency", "cannot subtract %s from %s", b.Currency, a.Currency)
	}
	if b.Minor > a.Minor {
		return Amount{}, automation.Invalid("amount", "result would be negative")
	}
	return Amount{Minor: a.Minor - b.Minor, Currency: a.Currency}, nil
}

// RoundHalfUp is the package's one rounding rule: d rounded to a whole number, halves up.
// It refuses a negative value or one above MaxMinor.
func RoundHalfUp(field string, d decimal.Decimal) (Minor, error) {
	if d.IsNegative() {
		return 0, automation.Invalid(field, "is negative")
	}
	r := d.Round(0) // half away from zero = half up for non-negative values
	if r.GreaterThan(decimal.NewFromInt(MaxMinor)) {
		return 0, automation.Invalid(field, "exceeds %d minor units", MaxMinor)
	}
	return Minor(r.IntPart()), nil
}

// ParseDecimal parses an exact non-negative decimal of at most 32 characters ("12.5",
// "0.0004"): digits with at most one point, no sign, no exponent. Errors are
// automation.Invalid on field.
func ParseDecimal(field, s string) (decimal.Decimal, error) {
	if s == "" || len(s) > 32 {
		return decimal.Decimal{}, automation.Invalid(field, "must be a decimal of 1 to 32 characters")
	}
	dot := 0
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
		case r == '.' && i > 0 && i < len(s)-1:
			dot++
		default:
			return decimal.Decimal{}, automation.Invalid(field, "%q is not a non-negative decimal", s)
		}
	}
	if dot > 1 {
		return decimal.Decimal{}, automation.Invalid(field, "%q is not a non-negative decimal", s)
	}
	return decimal.RequireFromString(s), nil
}

// Convert turns a into currency to at the exact rate (units of `to` per one unit of a's
// currency, in major units), adjusting for the two exponents, and rounds once with
// RoundHalfUp. It is only called where a price policy names a conversion.
func Convert(a Amount, to Currency, rate decimal.Decimal) (Amount, error) {
	if to.IsZero() {
		return Amount{}, automation.Invalid("currency", "conversion target is required")
	}
	if !rate.IsPositive() {
		return Amount{}, automation.Invalid("conversionRate", "must be positive")
	}
	shift := int32(to.exponent - a.Currency.exponent)
	exact := decimal.NewFromInt(int64(a.Minor)).Mul(rate).Shift(shift)
	m, err := RoundHalfUp("amount", exact)
	if err != nil {
		return Amount{}, err
	}
	return Amount{Minor: m, Currency: to}, nil
}

// ParseMinorJSON reads an amount from a raw JSON value: a string of digits ("1500") or an
// integer number (1500). A missing value (empty or null) is 0 when optional, else an error.
// Everything else — a negative, a fraction, an exponent, a boolean — is automation.Invalid
// on field, so an API answers 422 naming the field instead of "not valid JSON".
func ParseMinorJSON(field string, raw []byte, optional bool) (Minor, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		if optional {
			return 0, nil
		}
		return 0, automation.Invalid(field, "is required (a whole number of minor units, as a string)")
	}
	if s[0] == '"' {
		var str string
		if err := json.Unmarshal([]byte(s), &str); err != nil {
			return 0, automation.Invalid(field, "is not a string")
		}
		return ParseMinor(field, str)
	}
	return ParseMinor(field, s)
}
