package automation_test

import (
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
)

// TestCheckAuditRefusesHiddenCharacters: who and why typed by a person are refused (never
// cleaned silently) with a NUL, a right-to-left override or over their bound; new lines and
// tabs stay allowed in a reason; both are returned trimmed.
func TestCheckAuditRefusesHiddenCharacters(t *testing.T) {
	t.Parallel()
	bad := map[string][2]string{
		"operator NUL":    {"ops\x00", "ok"},
		"operator U+202E": {"ops.\u202Eenaj", "ok"},
		"operator 10k":    {strings.Repeat("x", 10000), "ok"},
		"operator blank":  {" ", "ok"},
		"reason NUL":      {"ops", "checked\x00"},
		"reason U+202E":   {"ops", "the \u202Eprovider"},
		"reason U+2066":   {"ops", "the \u2066provider"},
		"reason 10k":      {"ops", strings.Repeat("x", 10000)},
		"reason blank":    {"ops", " \n"},
	}
	for name, in := range bad {
		if _, _, err := automation.CheckAudit(in[0], in[1]); !automation.IsInvalid(err) {
			t.Errorf("%s: %v, want CodeInvalidInput", name, err)
		}
	}
	op, reason, err := automation.CheckAudit(" Nguyễn Văn A ", " line one\n\tline two ")
	if err != nil || op != "Nguyễn Văn A" || reason != "line one\n\tline two" {
		t.Fatalf("%q %q %v", op, reason, err)
	}
	if _, _, err := automation.CheckAudit(strings.Repeat("é", 100), strings.Repeat("é", automation.MaxReasonChars)); err != nil {
		t.Fatalf("at the bounds: %v", err)
	}
}

// TestOperatorNameCleans: a header's name is cleaned (not refused) and cut at a rune boundary.
func TestOperatorNameCleans(t *testing.T) {
	t.Parallel()
	if got := automation.OperatorName(" ana\u202e\x00 "); got != "ana" {
		t.Fatalf("%q", got)
	}
	if got := automation.OperatorName(strings.Repeat("é", 150)); len(got) != automation.MaxOperatorBytes || !strings.HasPrefix(got, "é") {
		t.Fatalf("%d bytes", len(got))
	}
}

// One display-name rule: a business unit's, a reminder setting's and a campaign's name.
func TestValidDisplayName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"Welcome campaign", true},
		{"Khuyến mãi tháng 12 🎉", true},
		{strings.Repeat("a", automation.MaxDisplayNameUnits), true},
		{strings.Repeat("🎉", automation.MaxDisplayNameUnits/2), true}, // two UTF-16 units each
		{strings.Repeat("🎉", automation.MaxDisplayNameUnits/2+1), false},
		{strings.Repeat("a", automation.MaxDisplayNameUnits+1), false},
		{"", false},
		{"   ", false},
		{"a\x00b", false},
		{"line\nbreak", false},
		{"invoice \u202Egpj.exe", false},
		{"left\u2066isolate", false},
	} {
		if got := automation.ValidDisplayName(c.name); got != c.ok {
			t.Errorf("ValidDisplayName(%q) = %v, want %v", c.name, got, c.ok)
		}
	}
}

// Clip cuts at a rune boundary: a rune the cut would split is dropped whole, so the result
// is valid UTF-8 and never longer than n bytes; a text within n is returned as it is.
func TestClipCutsAtARuneBoundary(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"aé", 2, "a"}, // é is 2 bytes: cut inside it
		{"aé", 3, "aé"},
		{"日本語", 4, "日"}, // 3 bytes a rune
		{"", 0, ""},
	} {
		if got := automation.Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
