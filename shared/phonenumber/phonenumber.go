package phonenumber

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/nyaruka/phonenumbers"
)

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// Validate checks an E.164 number ("+" and 7 to 15 digits, no spaces) whose country calling
// code exists and whose length is possible for that country. The error says which:
// "not E.164", "unknown country code", or "not a possible number length".
func Validate(n string) error {
	if !e164.MatchString(n) {
		return fmt.Errorf("phone number %q is not E.164: a '+' and 7 to 15 digits, nothing else", n)
	}
	num, err := phonenumbers.Parse(n, "")
	if errors.Is(err, phonenumbers.ErrInvalidCountryCode) {
		return fmt.Errorf("phone number %q: unknown country code (no country calling code begins %s)", n, n[:4])
	}
	if err != nil {
		return fmt.Errorf("phone number %q: %v", n, err)
	}
	if phonenumbers.GetRegionCodeForCountryCode(int(num.GetCountryCode())) == "ZZ" {
		return fmt.Errorf("phone number %q: unknown country code +%d", n, num.GetCountryCode())
	}
	if !phonenumbers.IsPossibleNumber(num) {
		return fmt.Errorf("phone number %q: not a possible number length for country code +%d", n, num.GetCountryCode())
	}
	return nil
}
