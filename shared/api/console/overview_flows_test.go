package console_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/metricscount"
	"github.com/automation-platform/automation/shared/store"
)

// TestOverviewTriggersReportsAndChannels (issue 35, "overview for every flow"): the overview
// counts deliveries by channel from the same reading as the deliveries chart (the channel
// rows add up to the chart's totals), and charts attribute triggers and report runs from the
// persisted counters: the runtime's trigger counts reach the chart through its metrics
// sampler (not this process's memory), report runs from MetricsCount; a caller of another
// unit sees none of bu-syd's.
func TestOverviewTriggersReportsAndChannels(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	// One sms delivery besides the fixture's log ones.
	e.completeFixtureRow(t, "sms", now.Add(-time.Hour), store.NotificationRequest{DeliveryKey: "dlv_sms_1", BusinessUnitID: "bu-syd", Channel: "sms",
		Recipient: "+61400000000", Template: "t", LocalDate: "2026-10-05", PayloadJSON: "{}"})
	cl, err := e.rt.Store.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: "dlv_sms_1", Now: now.Add(-10 * time.Minute), Lease: time.Minute})
	if err != nil || !cl.Claimed {
		t.Fatalf("claim sms: %+v %v", cl, err)
	}
	if err := e.rt.Store.NotificationFinish(ctx, store.NotificationFinishParams{ID: cl.Job.ID, Token: cl.Job.Version, Now: now.Add(-10 * time.Minute), Status: store.NotificationSent}); err != nil {
		t.Fatal(err)
	}
	// Triggers through the runtime's own counter and sampler; report runs as persisted.
	e.rt.Attributes.Triggers.Add("bu-syd", "GoldReached", metricscount.OutcomeFired, 2)
	if res, err := e.rt.MetricsSampler.RunOnce(ctx); err != nil || res.Counts < 1 {
		t.Fatalf("sampler: %+v %v", res, err)
	}
	if err := e.rt.Store.MetricsCountAdd(ctx, "report-runs", []store.MetricsCount{
		{MinuteOn: now.Add(-5 * time.Minute), Flow: metricscount.FlowReport, BusinessUnitID: "bu-syd", Label: "activity", Outcome: metricscount.OutcomeDelivered, N: 1},
		{MinuteOn: now.Add(-4 * time.Minute), Flow: metricscount.FlowReport, BusinessUnitID: "bu-syd", Label: "activity", Outcome: metricscount.OutcomeSkipped, N: 3},
	}); err != nil {
		t.Fatal(err)
	}
	overview := func(headers ...string) string {
		t.Helper()
		code, body := e.get(t, http.DefaultClient, "/api/console/?hours=3", append([]string{"Authorization", "Bearer " + token}, headers...)...)
		if code != 200 {
			t.Fatalf("overview: %d %.2000s", code, body)
		}
		return body
	}
	body := overview()
	num := func(re, s string) int {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("%s not in %.3000s", re, s)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	table := body[strings.Index(body, `id="deliveries-by-channel"`):]
	table = table[:strings.Index(table, "</table>")]
	sent := num(`Sent: (\d+)<`, legendOf(t, body, "chart-deliveries"))
	logSent, smsSent := num(`<th scope="row">log</th><td>(\d+)</td>`, table), num(`<th scope="row">sms</th><td>(\d+)</td>`, table)
	if smsSent != 1 || logSent+smsSent != sent || num(`<th scope="row">All channels</th><td>(\d+)</td>`, table) != sent {
		t.Fatalf("by channel: log %d + sms %d, the chart says %d: %s", logSent, smsSent, sent, table)
	}
	if l := legendOf(t, body, "chart-trg"); !strings.Contains(l, "Fired: 2<") {
		t.Fatalf("triggers: %s", l)
	}
	if l := legendOf(t, body, "chart-rep"); !strings.Contains(l, "Delivered: 1<") || !strings.Contains(l, "Failed: 0<") || !strings.Contains(l, "Skipped: 3<") {
		t.Fatalf("reports: %s", l)
	}
	nyc := overview("X-Automation-Business-Units", "bu-nyc")
	if l := legendOf(t, nyc, "chart-trg"); !strings.Contains(l, "Fired: 0<") {
		t.Fatalf("bu-nyc sees bu-syd's triggers: %s", l)
	}
	if l := legendOf(t, nyc, "chart-rep"); !strings.Contains(l, "Delivered: 0<") {
		t.Fatalf("bu-nyc sees bu-syd's reports: %s", l)
	}
	if strings.Contains(nyc[strings.Index(nyc, `id="deliveries-by-channel"`):], `<th scope="row">sms</th>`) {
		t.Fatal("bu-nyc sees bu-syd's sms delivery")
	}
}

// legendOf answers the legend (the figcaption, from its opening tag) of the chart whose
// figure has id chartID ("chart-commands") in an overview page; no such chart fails t.
func legendOf(t *testing.T, body, chartID string) string {
	t.Helper()
	i := strings.Index(body, `id="`+chartID+`"`)
	if i < 0 {
		t.Fatalf("no %s: %.3000s", chartID, body)
	}
	fig := body[i:]
	return fig[strings.Index(fig, "<figcaption>"):strings.Index(fig, "</figcaption>")]
}

// overviewLegend reads the overview of the last hour with the bearer token (headers added,
// e.g. a narrowed X-Automation-Business-Units) and answers the legend of chart chartID
// (legendOf); a status other than 200 fails t.
func (e *env) overviewLegend(t *testing.T, chartID string, headers ...string) string {
	t.Helper()
	code, body := e.get(t, http.DefaultClient, "/api/console/?hours=1", append([]string{"Authorization", "Bearer " + token}, headers...)...)
	if code != 200 {
		t.Fatalf("overview: %d %.2000s", code, body)
	}
	return legendOf(t, body, chartID)
}
