package localtime_test

import (
	"errors"
	"testing"

	"github.com/automation-platform/automation/shared/localtime"
)

func TestResolveZoneID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
		windows  bool
	}{
		{"Australia/Sydney", "Australia/Sydney", false},
		{"UTC", "UTC", false},
		{"AUS Eastern Standard Time", "Australia/Sydney", true},
		{"Eastern Standard Time", "America/New_York", true},
		{"SE Asia Standard Time", "Asia/Bangkok", true},
		{"Nepal Standard Time", "Asia/Katmandu", true}, // +05:45; CLDR names the older link, which tzdata keeps
		{"Lord Howe Standard Time", "Australia/Lord_Howe", true},
		{"UTC", "UTC", false},
	}
	for _, c := range cases {
		got, win, err := localtime.ResolveZoneID(c.in)
		if err != nil || got != c.want || win != c.windows {
			t.Errorf("ResolveZoneID(%q) = %q, %v, %v; want %q, %v", c.in, got, win, err, c.want, c.windows)
		}
	}
	for _, bad := range []string{"", "Local", "Mars/Olympus_Mons", "aus eastern standard time", "AUS Eastern Standard Time "} {
		if _, _, err := localtime.ResolveZoneID(bad); !errors.Is(err, localtime.ErrUnknownZone) {
			t.Errorf("ResolveZoneID(%q): err = %v, want ErrUnknownZone", bad, err)
		}
	}
}

// Every Windows id of the vendored CLDR data must map to a zone of the embedded tzdata:
// a CLDR refresh naming a zone our tzdata lacks fails here, not in production.
func TestEveryWindowsZoneLoads(t *testing.T) {
	t.Parallel()
	ids := localtime.WindowsZoneIDs()
	if len(ids) < 100 || localtime.WindowsZonesCLDRVersion() == "" {
		t.Fatalf("%d Windows ids, CLDR %q", len(ids), localtime.WindowsZonesCLDRVersion())
	}
	for _, id := range ids {
		iana, win, err := localtime.ResolveZoneID(id)
		// Some Windows ids ("UTC") are IANA ids too; those resolve as IANA.
		if err != nil || iana == "" || (!win && iana != id) {
			t.Errorf("%s: %q %v %v", id, iana, win, err)
		}
	}
}
