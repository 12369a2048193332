package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/gateway"
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

// Every figure of the overview is drawn from the same reading as its chart (issue 35): the
// legend's "now" is the tile's figure even when the last sample said otherwise (the tile
// read "Due backlog 0" while the legend said "now 1"); with one sample the chart says so
// and draws no line; from two samples it draws them and the reading now; the y-axis labels
// end inside the chart's left margin.
func TestOverviewFiguresAgreeWithTheirCharts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	bearer := []string{"Authorization", "Bearer " + token}
	tile := regexp.MustCompile(`<dd id="m-due">(\d+)</dd>`)
	put := func(on time.Time, due int, age int64) {
		t.Helper()
		if err := e.rt.Store.MetricsSamplePut(ctx, []store.MetricsSample{{BusinessUnitID: store.PlatformUnit, SampledOn: on, PendingDue: due, OldestDueAgeSeconds: age}}); err != nil {
			t.Fatal(err)
		}
	}
	put(now.Add(-time.Minute), 7, 23100) // 6h 25m
	code, body := e.get(t, http.DefaultClient, "/api/console/?hours=1", bearer...)
	m := tile.FindStringSubmatch(body)
	if code != 200 || m == nil || m[1] == "7" {
		t.Fatalf("the tile: %d %v (the fixture needs a figure now other than the sample's 7)", code, m)
	}
	if strings.Contains(body, " for *.") || !strings.Contains(body, " for every business unit.") {
		t.Fatalf("an all-units scope is printed as *: %.2000s", body[strings.Index(body, "Figures as of"):])
	}
	if !strings.Contains(body, "Due backlog: now "+m[1]+"<") || !strings.Contains(body, "one sample so far") {
		t.Fatalf("one sample: the legend must say now %s and the chart that one sample draws no line: %.3000s", m[1], body[strings.Index(body, `id="chart-backlog"`):])
	}
	put(now.Add(-2*time.Minute), 9, 60)
	_, body = e.get(t, http.DefaultClient, "/api/console/?hours=1", bearer...)
	chart := body[strings.Index(body, `id="chart-backlog"`):]
	chart = chart[:strings.Index(chart, "</figure>")]
	pts := regexp.MustCompile(`<polyline class="series sent"[^>]*points="([^"]*)"`).FindStringSubmatch(chart)
	if pts == nil || len(strings.Fields(pts[1])) != 3 || !strings.Contains(chart, "Due backlog: now "+m[1]+", peak 9") || strings.Contains(chart, "one sample") {
		t.Fatalf("two samples and the reading now: %s", chart)
	}
	// The ages chart's longest label ("6h 25m") ends right of x = 0 with a margin that fits it.
	ages := body[strings.Index(body, `id="chart-ages"`):]
	ticks := regexp.MustCompile(`<text class="tick" x="([\d.]+)" y="[\d.]+" text-anchor="end" dominant-baseline="middle">([^<]+)</text>`).FindAllStringSubmatch(ages[:strings.Index(ages, "</figure>")], -1)
	if len(ticks) != 3 {
		t.Fatalf("age ticks: %v", ticks)
	}
	for _, tk := range ticks {
		var x float64
		fmt.Sscan(tk[1], &x)
		if need := float64(len(tk[2])) * 6.5; x < need {
			t.Errorf("y label %q ends at x=%.0f: it needs %.0f units at 11 px", tk[2], x, need)
		}
	}
}

// The overview counts campaign commands beside the deliveries (issue 35: "Sent: 0" after
// three campaign messages, which are commands, not NotificationJob rows), from the
// CampaignCommand table itself, so the figures survive a restart and agree across
// instances; a running command does not count; a caller of another unit sees none.
func TestOverviewCountsCampaignCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	for i, st := range []store.CommandStatus{store.CommandSucceeded, store.CommandSucceeded, store.CommandSucceeded, store.CommandFailed, store.CommandRunning} {
		exe := fmt.Sprintf("cx-%d", i)
		cmd := store.CampaignCommand{CommandID: exe + ":0:msg", EffectKey: "ce-" + exe, ExecutionID: exe, BusinessUnitID: "bu-syd", CampaignID: "welcome",
			RecipientID: "C1", ActionKey: "msg", ActionType: "NOTIFICATION_INBOX", Provider: "inbox", LocalDate: "2026-10-05"}
		at := now.Add(-time.Duration(10-i) * time.Minute)
		if _, err := e.rt.Store.CampaignStart(ctx, store.CampaignStartParams{Execution: store.CampaignExecution{ExecutionID: exe, BusinessUnitID: "bu-syd",
			CampaignID: "welcome", RunID: "r1", RecipientID: "C1", SourceEventID: "evt-" + exe, LocalDate: "2026-10-05", DefinitionJSON: `{}`}, Command: cmd, Now: at}); err != nil {
			t.Fatal(err)
		}
		r, err := e.rt.Store.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: cmd.CommandID, Now: at, Lease: time.Minute, FreezeParams: `{}`})
		if err != nil || !r.Claimed {
			t.Fatal(r, err)
		}
		if st == store.CommandRunning {
			continue
		}
		if _, err := e.rt.Store.CampaignFinish(ctx, store.CampaignFinishParams{CommandID: cmd.CommandID, Token: r.Command.Version, Now: at, Status: st}); err != nil {
			t.Fatal(err)
		}
	}
	legend := func(headers ...string) string {
		t.Helper()
		return e.overviewLegend(t, "chart-commands", headers...)
	}
	if l := legend(); !strings.Contains(l, "Succeeded: 3") || !strings.Contains(l, "Failed: 1") || !strings.Contains(l, "UNKNOWN: 0") {
		t.Fatalf("campaign commands legend: %s", l)
	}
	if l := legend("X-Automation-Business-Units", "bu-nyc"); !strings.Contains(l, "Succeeded: 0") {
		t.Fatalf("bu-nyc's legend: %s", l)
	}
}

// The overview charts the gateway's ingest results from the persisted counters (issue 35:
// "Event metrics reset when the process restarts"): events counted by one runtime are
// flushed on Close and still on the overview of the next runtime on the same database; the
// next runtime's counts are added by the metrics sampler; a caller of another unit sees
// none of bu-syd's.
func TestOverviewIngestCountsSurviveARestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	def := `{"eventType":"ViewItem","class":"COUNTER","schema":{"type":"object"},"counterInstructions":[{"attribute_code":"views","entity_type":"CUSTOMER","operation":"INCREMENT"}]}`
	if _, err := e.rt.Registry.Save(ctx, gateway.SaveParams{EventType: "ViewItem", Definition: []byte(def), Operator: "ops.jane"}); err != nil {
		t.Fatal(err)
	}
	ingest := func(e *env, id, typ string) {
		t.Helper()
		req, _ := http.NewRequest("POST", e.url("/api/events"), strings.NewReader(`{"specversion":"1.0","id":"`+id+`","source":"/app","type":"`+typ+`","businessunitid":"bu-syd","customerid":"C-1","data":{}}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/cloudevents+json")
		want := 200
		if typ != "ViewItem" {
			want = 422 // rejected, and counted as such
		}
		if code, body := do(t, http.DefaultClient, req); code != want {
			t.Fatalf("ingest %s: %d %s", id, code, body)
		}
	}
	ingest(e, "v-1", "ViewItem")
	ingest(e, "v-2", "ViewItem")
	ingest(e, "v-2", "ViewItem") // a duplicate
	ingest(e, "v-3", "NoSuchType")
	legend := func(e *env, headers ...string) string {
		t.Helper()
		return e.overviewLegend(t, "chart-ingest", headers...)
	}
	// Not persisted yet (the sampler has not run): the chart reads SQL, not this process.
	if l := legend(e); !strings.Contains(l, "Accepted: 0") {
		t.Fatalf("before any flush: %s", l)
	}
	// A restart: Close flushes, a new runtime opens the same database.
	if err := e.rt.Close(); err != nil {
		t.Fatal(err)
	}
	e.srv.Close()
	rt, err := app.Open(ctx, e.cfg, app.Options{Clock: e.clock, Seed: 5, LogOutput: io.Discard, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	e2 := &env{rt: rt, clock: e.clock, cfg: e.cfg, srv: httptest.NewServer(rt.ListenerHandler(false))}
	t.Cleanup(e2.srv.Close)
	if l := legend(e2); !strings.Contains(l, "Accepted: 2") || !strings.Contains(l, "Rejected: 1") || !strings.Contains(l, "Duplicate: 1") {
		t.Fatalf("after the restart: %s", l)
	}
	if l := legend(e2, "X-Automation-Business-Units", "bu-nyc"); !strings.Contains(l, "Accepted: 0") || !strings.Contains(l, "Rejected: 0") {
		t.Fatalf("bu-nyc's legend: %s", l)
	}
	// The new runtime's counts go through its sampler, added to the same minute's counters.
	ingest(e2, "v-4", "ViewItem")
	e.clock.Set(now.Add(30 * time.Second))
	if res, err := rt.MetricsSampler.RunOnce(ctx); err != nil || res.Counts != 1 {
		t.Fatalf("sampler: %+v %v", res, err)
	}
	if l := legend(e2); !strings.Contains(l, "Accepted: 3") {
		t.Fatalf("after the sampler: %s", l)
	}
}
