package console

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/support"
)

// A session cookie is accepted only as issued, before its expiry, under its key; its CSRF
// token belongs to it alone.
func TestSessionCookieVerification(t *testing.T) {
	t0 := time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC)
	s := sessions{key: []byte("k1"), lifetime: time.Hour}
	ss, v := s.issue(t0)
	if got, ok := s.verify(v, t0.Add(59*time.Minute)); !ok || got.nonce != ss.nonce {
		t.Fatalf("fresh cookie refused: %v", ok)
	}
	parts := strings.Split(v, ".")
	longer := strings.Join([]string{parts[0], "9999999999", parts[2], parts[3]}, ".")
	otherNonce := strings.Join([]string{parts[0], parts[1], strings.Repeat("0", 32), parts[3]}, ".")
	for name, c := range map[string]string{
		"expired":        v,
		"expiry changed": longer,
		"nonce changed":  otherNonce,
		"no MAC":         strings.Join(parts[:3], "."),
		"empty":          "",
		"another key":    func() string { _, x := (sessions{key: []byte("k2"), lifetime: time.Hour}).issue(t0); return x }(),
	} {
		at := t0.Add(time.Minute)
		if name == "expired" {
			at = t0.Add(time.Hour)
		}
		if _, ok := s.verify(c, at); ok {
			t.Errorf("%s: accepted", name)
		}
	}
	other, _ := s.issue(t0)
	if !s.checkCSRF(ss, s.csrf(ss)) || s.checkCSRF(ss, s.csrf(other)) || s.checkCSRF(ss, "") {
		t.Fatal("a CSRF token belongs to its session only")
	}
}

// safeNext keeps the sign-in's redirect inside the console.
func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/api/console/rows?status=Failed": "/api/console/rows?status=Failed",
		"//evil.example/api/console/":     Base + "/",
		"https://evil.example/":           Base + "/",
		"/api/console/\\evil":             Base + "/",
		"/api/support/metrics":            Base + "/",
		"":                                Base + "/",
		// Dot segments: http.Redirect cleans the path, so these left the console.
		"/api/console/../support/metrics":   Base + "/",
		"/api/console/../..//evil.example":  Base + "/",
		"/api/console/./rows/../rows?x=../": "/api/console/./rows/../rows?x=../",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// The chart puts the largest count at the top, zero on the axis, one point per minute, and
// sums the table rows to the window's totals.
func TestThroughputChart(t *testing.T) {
	t0 := time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC)
	tp := support.Throughput{Sent: 6, Failed: 1, Minutes: []support.ThroughputMinute{
		{Minute: t0, Sent: 2}, {Minute: t0.Add(time.Minute), Sent: 4, Failed: 1}, {Minute: t0.Add(2 * time.Minute)}}}
	c := throughputChart(tp, "tp")
	if c.YMax != 4 || len(c.Series) != 3 {
		t.Fatalf("chart %+v", c)
	}
	pts := strings.Fields(c.Series[0].Points)
	if len(pts) != 3 || pts[1] != "375.0,10.0" || pts[2] != "710.0,176.0" || pts[0] != "40.0,93.0" {
		t.Fatalf("sent points %q", pts)
	}
	sent, failed := 0, 0
	for _, r := range c.Rows {
		sent, failed = sent+r.Sent, failed+r.Failed
	}
	if sent != 6 || failed != 1 || c.XTicks[2].Label != "09:02Z" || c.XTicks[2].Anchor != "end" {
		t.Fatalf("rows %+v ticks %+v", c.Rows, c.XTicks)
	}
	if empty := throughputChart(support.Throughput{}, "tp"); empty.YMax != 1 || len(empty.XTicks) != 0 {
		t.Fatalf("empty window %+v", empty)
	}
}

// A person's (v2) cookie carries their name, roles and units under the MAC: read back as
// issued; a payload changed to widen the units or raise the role, or a v1 cookie relabelled
// v2, is refused.
func TestPersonSessionCookieVerification(t *testing.T) {
	t0 := time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC)
	s := sessions{key: []byte("k1"), lifetime: time.Hour}
	p := httpapi.Principal{Name: "oidc:jane", Roles: []httpapi.Role{httpapi.RoleRead}, Scope: automation.BusinessUnits("bu-a")}
	_, v := s.issueFor(t0, p)
	got, ok := s.verify(v, t0.Add(time.Minute))
	if !ok || got.principal == nil || got.principal.Name != "oidc:jane" || !got.principal.Has(httpapi.RoleRead) ||
		got.principal.Has(httpapi.RoleOperate) || got.principal.Scope.String() != "bu-a" {
		t.Fatalf("person's cookie: %+v %v", got.principal, ok)
	}
	parts := strings.Split(v, ".")
	forge := func(cp cookiePrincipal) string {
		b, _ := json.Marshal(cp)
		return strings.Join([]string{parts[0], parts[1], parts[2], base64.RawURLEncoding.EncodeToString(b), parts[4]}, ".")
	}
	_, v1 := s.issue(t0)
	p1 := strings.Split(v1, ".")
	for name, c := range map[string]string{
		"units widened": forge(cookiePrincipal{Name: "oidc:jane", Roles: []string{"read"}, Units: "*"}),
		"role raised":   forge(cookiePrincipal{Name: "oidc:jane", Roles: []string{"admin"}, Units: "bu-a"}),
		"v1 as v2":      strings.Join([]string{"v2", p1[1], p1[2], parts[3], p1[3]}, "."),
		"v2 as v1":      strings.Join([]string{"v1", parts[1], parts[2], parts[4]}, "."),
	} {
		if _, ok := s.verify(c, t0.Add(time.Minute)); ok {
			t.Errorf("%s: accepted", name)
		}
	}
	c := &Console{sess: s}
	if c.SessionPrincipal(v) != "oidc:jane" || c.SessionPrincipal(v1) != httpapi.BootstrapName {
		t.Errorf("SessionPrincipal: %q %q", c.SessionPrincipal(v), c.SessionPrincipal(v1))
	}
}

// The row page's timeline is causal and stable (issue 35): Created first even when an
// attempt's trace stamp reads earlier within the same second; attempts by number within a
// instant by kind (an attempt, then the support action answering it) and number; Completed
// last.
func TestTimelineIsCausalWithinASecond(t *testing.T) {
	t0 := time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC)
	done := t0.Add(3 * time.Second)
	d := support.Detail{
		Row: support.Row{CreatedOn: t0.Add(800 * time.Millisecond), CompletedOn: &done},
		Attempts: []support.Attempt{
			{Attempt: 3, Outcome: "Completed", FinishedOn: t0.Add(2*time.Second + 100*time.Millisecond)},
			{Attempt: 2, Outcome: "Failed", FinishedOn: t0.Add(time.Second)},
			{Attempt: 1, Outcome: "Failed", FinishedOn: t0.Add(200 * time.Millisecond)},
		},
		Audit: []support.Audit{{ID: 8, Action: "Release", On: t0.Add(2 * time.Second)}, {ID: 7, Action: "Retry", On: t0.Add(time.Second)}},
	}
	var got []string
	for _, e := range timeline(d) {
		got = append(got, strings.SplitN(e.Title, " (", 2)[0])
	}
	want := []string{"Created", "Attempt 1", "Attempt 2", "Support Retry", "Support Release", "Attempt 3", "Completed"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("timeline order %q, want %q", got, want)
	}
}
