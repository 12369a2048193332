package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// TestOverviewChartsTheHistory: after the runtime's sampler ran for 30 minutes of the fake
// clock, the overview draws the due backlog and holds, and the ages, from the samples — for a
// caller that sees every unit the platform row with the outbox age, for a caller limited to
// bu-nyc that unit's figures only (bu-syd's held row never shows) — and says so when nothing
// was sampled yet.
func TestOverviewChartsTheHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	bearer := []string{"Authorization", "Bearer " + token}
	code, body := e.get(t, http.DefaultClient, "/api/console/?hours=1", bearer...)
	if code != 200 || !strings.Contains(body, `id="chart-backlog"`) || !strings.Contains(body, "no samples yet") ||
		!strings.Contains(body, `<dd id="m-held">0</dd>`) || !strings.Contains(body, `<dd id="m-fees">0 · 0</dd>`) {
		t.Fatalf("before any sample: %d %.2000s", code, body)
	}
	ctx := context.Background()
	for m := 30; m >= 0; m-- {
		e.clock.Set(now.Add(-time.Duration(m) * time.Minute))
		if res, err := e.rt.MetricsSampler.RunOnce(ctx); err != nil || res.Samples != 3 {
			t.Fatalf("sample at -%d min: %+v %v", m, res, err)
		}
	}
	points := regexp.MustCompile(`<polyline class="series (\w+)"[^>]*points="([^"]*)"`)
	series := func(body, chart string) map[string]int {
		t.Helper()
		i := strings.Index(body, `id="chart-`+chart+`"`)
		if i < 0 {
			t.Fatalf("no chart %s in %.3000s", chart, body)
		}
		end := strings.Index(body[i:], "</figure>")
		out := map[string]int{}
		for _, m := range points.FindAllStringSubmatch(body[i:i+end], -1) {
			out[m[1]] = len(strings.Fields(m[2]))
		}
		return out
	}
	code, body = e.get(t, http.DefaultClient, "/api/console/?hours=1", bearer...)
	if code != 200 || !strings.Contains(body, "On hold: now 1, peak 1") || !strings.Contains(body, "Outbox age: now") {
		t.Fatalf("every unit: %d %.4000s", code, body)
	}
	if s := series(body, "backlog"); s["sent"] != 31 || s["failed"] != 31 {
		t.Fatalf("backlog series points: %v", s)
	}
	if s := series(body, "ages"); s["sent"] != 31 || s["unknown"] != 31 {
		t.Fatalf("age series points: %v", s)
	}
	code, body = e.get(t, http.DefaultClient, "/api/console/?hours=1", append(bearer, "X-Automation-Business-Units", "bu-nyc")...)
	if code != 200 || !strings.Contains(body, "On hold: now 0, peak 0") || strings.Contains(body, "Outbox age") {
		t.Fatalf("bu-nyc only: %d %.4000s", code, body)
	}
	if s := series(body, "backlog"); s["failed"] != 31 {
		t.Fatalf("bu-nyc backlog series: %v", s)
	}
	if code, _ := e.get(t, http.DefaultClient, "/api/console/?hours=1&businessUnitId=bu-syd", append(bearer, "X-Automation-Business-Units", "bu-nyc")...); code != 404 {
		t.Fatalf("bu-syd through bu-nyc's scope: %d", code)
	}
}

// TestFirstHourAddresses: the address a person types, /console, reaches the console in one
// redirect (not /api/console and then /api/console/), keeping its query; and the sign-in's
// 303 is an HTML answer, not JSON.
func TestFirstHourAddresses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for from, to := range map[string]string{"/console": "/api/console/", "/console/": "/api/console/", "/console?hours=6": "/api/console/?hours=6",
		"/console/rows": "/api/console/rows"} {
		res, err := client(t).Get(e.url(from))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != to {
			t.Fatalf("%s: %d %q, want 302 to %s", from, res.StatusCode, res.Header.Get("Location"), to)
		}
		next, err := client(t).Get(e.url(to))
		if err != nil {
			t.Fatal(err)
		}
		next.Body.Close()
		if next.StatusCode != http.StatusUnauthorized { // the sign-in form: no second hop
			t.Fatalf("%s then %s: %d, want the sign-in form (401)", from, to, next.StatusCode)
		}
	}
	req, _ := http.NewRequest("POST", e.url("/api/console/login"), strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("sign-in: %d %q, want 303 text/html", res.StatusCode, ct)
	}
}

// historyFixture records four hours of metrics samples before now, one a minute, for the
// browser test's overview (and its screenshot): bu-syd's due backlog rises to a peak of 40
// around two hours ago and drains, a second hold appears for an hour, the oldest due age
// follows the backlog, and the platform row adds bu-nyc's small backlog and an outbox age.
func (e *env) historyFixture(t *testing.T) {
	t.Helper()
	var ss []store.MetricsSample
	for m := 240; m >= 1; m-- {
		on := now.Truncate(time.Minute).Add(-time.Duration(m) * time.Minute)
		x := 240 - m
		due := 0
		if x > 60 && x < 180 {
			due = 40 - abs(x-120)*2/3
		}
		hold := 1
		if x >= 150 && x < 210 {
			hold = 2
		}
		age := int64(due * 9)
		outbox := int64(3 + (x*7)%5)
		ss = append(ss,
			store.MetricsSample{BusinessUnitID: "bu-syd", SampledOn: on, PendingDue: due, OldestDueAgeSeconds: age, OnHold: hold},
			store.MetricsSample{BusinessUnitID: "bu-nyc", SampledOn: on, PendingDue: x % 3},
			store.MetricsSample{BusinessUnitID: store.PlatformUnit, SampledOn: on, PendingDue: due + x%3, OldestDueAgeSeconds: age, OnHold: hold,
				OutboxUnsent: int(outbox) - 3, OutboxOldestAgeSeconds: outbox})
	}
	for len(ss) > 0 {
		n := min(len(ss), store.MaxBatch)
		if err := e.rt.Store.MetricsSamplePut(context.Background(), ss[:n]); err != nil {
			t.Fatal(err)
		}
		ss = ss[n:]
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
