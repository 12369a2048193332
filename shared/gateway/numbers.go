package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Bounds of a JSON number in event data and in a data schema (docs/gateway.md#bad-input).
// RFC 8259 (section 6) makes IEEE 754 binary64 the interoperable range of a JSON number; the schema
// library compares numbers exactly (math/big), and big.Rat.SetString gives up on (returns
// nil for) a decimal exponent beyond 10^6 and is slow well before it, so a number outside
// these bounds is refused on its own before any schema sees it.
const (
	// MaxNumberLength bounds the text of one number (characters).
	MaxNumberLength = 100
	// MaxNumberExponent bounds the written exponent's magnitude (the "e" part).
	MaxNumberExponent = 400
)

// checkNumber says why a JSON number's text is out of range ("" when it is in range): too
// long, a written exponent beyond ±MaxNumberExponent, or a magnitude beyond binary64.
func checkNumber(n string) string {
	if len(n) > MaxNumberLength {
		return fmt.Sprintf("a number of %d characters is out of range (at most %d)", len(n), MaxNumberLength)
	}
	if i := strings.IndexAny(n, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(n[i+1:], "+"))
		if err != nil || e > MaxNumberExponent || e < -MaxNumberExponent {
			return fmt.Sprintf("the number %s is out of range (exponent beyond ±%d)", n, MaxNumberExponent)
		}
	}
	if _, err := strconv.ParseFloat(n, 64); err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return fmt.Sprintf("the number %s is out of range (beyond ±1.8e308, an IEEE 754 double)", n)
		}
		return fmt.Sprintf("%s is not a JSON number", n)
	}
	return ""
}

// absurdNumber walks a decoded JSON value (json.Number for numbers, as
// jsonschema.UnmarshalJSON decodes them) and returns the JSON Pointer (relative to v) and
// reason of the first number out of range, in document order of sorted member names; ok
// false when every number is in range.
func absurdNumber(v any) (pointer, reason string, ok bool) {
	switch x := v.(type) {
	case json.Number:
		if r := checkNumber(string(x)); r != "" {
			return "", r, true
		}
	case []any:
		for i, e := range x {
			if p, r, bad := absurdNumber(e); bad {
				return "/" + strconv.Itoa(i) + p, r, true
			}
		}
	case map[string]any:
		keys := slices.AppendSeq(make([]string, 0, len(x)), maps.Keys(x)) // one allocation: ingest's path
		slices.Sort(keys)
		esc := strings.NewReplacer("~", "~0", "/", "~1")
		for _, k := range keys {
			if p, r, bad := absurdNumber(x[k]); bad {
				return "/" + esc.Replace(k) + p, r, true
			}
		}
	}
	return "", "", false
}
