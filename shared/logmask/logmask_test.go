package logmask_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/logmask"
)

func TestString(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"to amelia.nguyen@example.test now":     "to a***@example.test now",
		"call +61 412 345 678 today":            "call ***5678 today",
		"(02) 9876-5432":                        "***5432",
		"2026-10-04T03:30:00+11:00":             "2026-10-04T03:30:00+11:00",
		"3b2d6f0e-1a4c-4d8e-9b7a-2c5e8f1a3d6b":  "3b2d6f0e-1a4c-4d8e-9b7a-2c5e8f1a3d6b",
		"reminder:0f8f6b1e:x:2026-10-31:30":     "reminder:0f8f6b1e:x:2026-10-31:30",
		"revision 12345678901234567890":         "revision 12345678901234567890",
		"no personal data":                      "no personal data",
		"expiresOn changed to 2027-03-20 today": "expiresOn changed to 2027-03-20 today",
		"\"2027-03-20\"":                        "\"2027-03-20\"",
		"call 2027-0320-11":                     "call ***2011",
		// Addresses and numbers inside URLs: percent-encoded, and the tel: scheme.
		"POST https://hooks.example.test/notify?to=amelia.nguyen%40example.test&x=1": "POST https://hooks.example.test/notify?to=a***%40example.test&x=1",
		"to=ZOE%40EXAMPLE.TEST":     "to=Z***%40EXAMPLE.TEST",
		"sms?to=%2B61412345678":     "sms?to=***5678",
		"tel:+61412345678":          "tel:***5678",
		"TEL:+61-412-345-678":       "TEL:***5678",
		"tel:0412345678":            "tel:***5678",
		"phone:+61 412 345 678":     "phone:***5678",
		"key:+11:00":                "key:+11:00",
		"hotel:12345678":            "hotel:12345678",
		"reminder:x:evt-12345678:0": "reminder:x:evt-12345678:0",
	}
	for in, want := range cases {
		if got := logmask.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHandlerMasksMessageAttrsGroupsAndErrors(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(logmask.New(slog.NewJSONHandler(&buf, nil))).With("staff", "bob@example.test")
	log.Info("sent to carol@example.test", "recipient", "dave@example.test",
		slog.Group("g", "phone", "+61 412 345 678"), "error", errors.New("bounce from erin@example.test"))
	out := buf.String()
	for _, leak := range []string{"bob@", "carol@", "dave@", "erin@", "412 345"} {
		if strings.Contains(out, leak) {
			t.Fatalf("unmasked %q in %s", leak, out)
		}
	}
	if !strings.Contains(out, "b***@example.test") || !strings.Contains(out, "***5678") {
		t.Fatalf("masked forms missing: %s", out)
	}
}
