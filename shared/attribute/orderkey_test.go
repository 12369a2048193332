package attribute

import (
	"sort"
	"testing"
)

// OrderKey sorts as text like the numbers it encodes (the ranking index's order), negatives,
// fractions and the clamp included.
func TestOrderKeySortsLikeTheNumbers(t *testing.T) {
	nums := []string{"-1000000000000000000000000000", "-12.5", "-12.25", "-1", "-0.000001", "0", "0.000001", "0.5", "1", "2", "10", "10.000001", "999999999999999999"}
	keys := make([]string, len(nums))
	for i, n := range nums {
		keys[i] = OrderKey(num(n))
		if len(keys[i]) != 1+orderInt+orderFrac {
			t.Fatalf("%s: key %q is not fixed-width", n, keys[i])
		}
	}
	if !sort.StringsAreSorted(keys) {
		t.Fatalf("keys out of order: %q", keys)
	}
	if OrderKey(num("1e30")) != OrderKey(num("1e25")) {
		t.Error("magnitudes past 1e24 are not clamped")
	}
}
