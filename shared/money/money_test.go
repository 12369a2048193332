package money_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/money"
)

func TestParseCurrency(t *testing.T) {
	for code, exp := range map[string]int{"USD": 2, "VND": 0, "JPY": 0, "KWD": 3, "EUR": 2} {
		c, err := money.ParseCurrency(code)
		if err != nil || c.Exponent() != exp || c.Code() != code {
			t.Errorf("%s: got %v %d, want exponent %d", code, err, c.Exponent(), exp)
		}
	}
	// XXX (no currency) and XTS (testing) are ISO 4217 codes but not money, and the precious
	// metals are priced per troy ounce, not in minor units: a budget or fee in them means nothing.
	for _, bad := range []string{"", "usd", "US", "USDX", "ZZZ", "12A", "Usd", "XXX", "XTS", "XAU", "XAG", "XPT", "XPD"} {
		if _, err := money.ParseCurrency(bad); automation.CodeOf(err) != automation.CodeInvalidInput {
			t.Errorf("%q: got %v, want InvalidInput", bad, err)
		}
	}
}

func TestParseMinorRefusesAnythingButWholeNonNegative(t *testing.T) {
	for _, ok := range []string{"0", "1", "150000", "1000000000000000"} {
		if _, err := money.ParseMinor("maxCost", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-1", "+1", "1.5", "1e3", "01", " 1", "1000000000000001", "99999999999999999999", "NaN"} {
		if _, err := money.ParseMinor("maxCost", bad); automation.CodeOf(err) != automation.CodeInvalidInput {
			t.Errorf("%q: got %v, want InvalidInput", bad, err)
		}
	}
}

func TestMinorJSON(t *testing.T) {
	var v struct{ A money.Minor }
	for in, want := range map[string]money.Minor{`{"A":"12"}`: 12, `{"A":12}`: 12, `{"A":"0"}`: 0} {
		if err := json.Unmarshal([]byte(in), &v); err != nil || v.A != want {
			t.Errorf("%s: %v %d", in, err, v.A)
		}
	}
	for _, in := range []string{`{"A":-1}`, `{"A":1.5}`, `{"A":"1.0"}`, `{"A":1e2}`, `{"A":true}`, `{"A":"-3"}`} {
		if err := json.Unmarshal([]byte(in), &v); err == nil {
			t.Errorf("%s: accepted as %d", in, v.A)
		}
	}
	b, _ := json.Marshal(struct{ A money.Minor }{42})
	if string(b) != `{"A":"42"}` {
		t.Errorf("marshal: %s", b)
	}
}

func TestRoundHalfUpAndConvert(t *testing.T) {
	for in, want := range map[string]money.Minor{"12.5": 13, "12.4999": 12, "0.5": 1, "7": 7, "2.5": 3} {
		got, err := money.RoundHalfUp("fee", decimal.RequireFromString(in))
		if err != nil || got != want {
			t.Errorf("%s: %v %d, want %d", in, err, got, want)
		}
	}
	if _, err := money.RoundHalfUp("fee", decimal.RequireFromString("-0.1")); err == nil {
		t.Error("negative accepted")
	}
	usd, vnd := money.MustCurrency("USD"), money.MustCurrency("VND")
	// 1.25 USD = 125 cents at 25,000 VND per USD = 31,250 VND.
	got, err := money.Convert(money.Amount{Minor: 125, Currency: usd}, vnd, decimal.RequireFromString("25000"))
	if err != nil || got.Minor != 31250 || got.Currency != vnd {
		t.Fatalf("USD→VND: %v %+v", err, got)
	}
	// 31,251 VND at 0.00004 USD per VND = 1.25004 USD = 125.004 cents → 125.
	got, err = money.Convert(money.Amount{Minor: 31251, Currency: vnd}, usd, decimal.RequireFromString("0.00004"))
	if err != nil || got.Minor != 125 {
		t.Fatalf("VND→USD: %v %+v", err, got)
	}
}

func TestAddSubRefuseMixedCurrencies(t *testing.T) {
	usd, eur := money.MustCurrency("USD"), money.MustCurrency("EUR")
	if _, err := money.Add(money.Amount{Minor: 1, Currency: usd}, money.Amount{Minor: 1, Currency: eur}); err == nil {
		t.Error("USD+EUR accepted")
	}
	if _, err := money.Sub(money.Amount{Minor: 1, Currency: usd}, money.Amount{Minor: 2, Currency: usd}); err == nil {
		t.Error("negative result accepted")
	}
	if _, err := money.Add(money.Amount{Minor: money.Minor(money.MaxMinor), Currency: usd}, money.Amount{Minor: 1, Currency: usd}); err == nil {
		t.Error("overflow accepted")
	}
	var e *automation.Error
	if _, err := money.New(-5, usd); !errors.As(err, &e) {
		t.Errorf("negative New: %v", err)
	}
}

func TestParseMinorJSONNamesTheField(t *testing.T) {
	for in, want := range map[string]money.Minor{`"150"`: 150, `150`: 150, ``: 0, `null`: 0} {
		if got, err := money.ParseMinorJSON("maxCost", []byte(in), true); err != nil || got != want {
			t.Errorf("%s: %v %d", in, err, got)
		}
	}
	for _, in := range []string{`-1`, `1.5`, `"1.5"`, `1e3`, `true`, `"-2"`, `{}`} {
		_, err := money.ParseMinorJSON("maxCost", []byte(in), false)
		var e *automation.Error
		if !errors.As(err, &e) || automation.CodeOf(err) != automation.CodeInvalidInput || !strings.Contains(err.Error(), "maxCost") {
			t.Errorf("%s: %v", in, err)
		}
	}
	if _, err := money.ParseMinorJSON("maxCost", nil, false); err == nil {
		t.Error("missing required amount accepted")
	}
}

// TestAddSumsAndAcceptsExactlyMaxMinor pins Add's result (a + b, the currency of both) and
// its bound: a sum of exactly MaxMinor is the largest amount, so it is accepted; one more
// minor unit is refused.
func TestAddSumsAndAcceptsExactlyMaxMinor(t *testing.T) {
	t.Parallel()
	usd := money.MustCurrency("USD")
	cases := []struct{ a, b, want money.Minor }{
		{0, 0, 0},
		{7, 5, 12},
		{5, 7, 12},
		{money.Minor(money.MaxMinor) - 1, 1, money.Minor(money.MaxMinor)},
		{money.Minor(money.MaxMinor), 0, money.Minor(money.MaxMinor)},
		{0, money.Minor(money.MaxMinor), money.Minor(money.MaxMinor)},
	}
	for _, c := range cases {
		got, err := money.Add(money.Amount{Minor: c.a, Currency: usd}, money.Amount{Minor: c.b, Currency: usd})
		if err != nil {
			t.Errorf("Add(%d, %d): %v", c.a, c.b, err)
			continue
		}
		if got.Minor != c.want || got.Currency != usd {
			t.Errorf("Add(%d, %d) = %d %s, want %d USD", c.a, c.b, got.Minor, got.Currency, c.want)
		}
	}
	if _, err := money.Add(money.Amount{Minor: money.Minor(money.MaxMinor) - 1, Currency: usd}, money.Amount{Minor: 2, Currency: usd}); err == nil {
		t.Error("MaxMinor+1 accepted")
	}
}
