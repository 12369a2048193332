package sim

import "testing"

func TestOrderCommandGroupsTheAttemptsOfOneCommand(t *testing.T) {
	a, b := orderCommand("fee-0123456789abcdef0123456789abcdef-1"), orderCommand("fee-0123456789abcdef0123456789abcdef-2")
	if a != b || a != "fee-0123456789abcdef0123456789abcdef" {
		t.Fatalf("attempts of one command: %q, %q", a, b)
	}
	if c := orderCommand("fee-fedcba9876543210fedcba9876543210-1"); c == a {
		t.Fatalf("another command's order grouped with the first: %q", c)
	}
	if c := orderCommand("fee-0123456789abcdef0123456789abcdef-1-resent"); c != a {
		t.Fatalf("an order derived from the first: %q", c)
	}
}
