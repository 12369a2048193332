package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/report"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/support"
)

// rowsPageSize is the rows page of the search.
const rowsPageSize = 25

// checkBU refuses a business unit outside the caller's scope exactly like an unknown one.
func checkBU(x *call, bu string) error {
	if bu != "" && !x.caller.Scope.Allows(bu) {
		return automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
	}
	return nil
}

type overviewData struct {
	BusinessUnitID string
	Hours          int
	Metrics        support.Metrics
	Throughput     support.Throughput
	Chart          chart
	// Commands is the campaign commands' chart (succeeded, failed, UNKNOWN per minute).
	Commands     support.Throughput
	CommandChart chart
	// Ingest is the gateway's ingest results per minute (accepted, rejected, duplicate),
	// from the persisted counters (support.IngestThroughput).
	Ingest      support.Throughput
	IngestChart chart
	// Triggers is the attribute engine's trigger events per minute, Reports the report runs
	// (delivered, failed, skipped), both from the persisted counters (MetricsCount).
	Triggers     support.Throughput
	TriggerChart chart
	Reports      support.Throughput
	ReportChart  chart
	History      []chart
	Holds        []kv
}

type kv struct {
	Key   string
	Value int
}

func sortedKV(m map[string]int) []kv {
	out := make([]kv, 0, len(m))
	for k, v := range m {
		out = append(out, kv{k, v})
	}
	slices.SortFunc(out, func(a, b kv) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// overview: the pipeline's figures now and deliveries per minute over the last hours.
func (c *Console) overview(w http.ResponseWriter, r *http.Request, x *call) error {
	if r.URL.Path != Base+"/" {
		return automation.Errorf(automation.CodeNotFound, "no console page %q", r.URL.Path)
	}
	q := r.URL.Query()
	bu := strings.TrimSpace(q.Get("businessUnitId"))
	hours, err := httpapi.NewQuery(q).Int("hours", 3, 1, support.MaxThroughputHours)
	if err != nil {
		return err
	}
	if err := checkBU(x, bu); err != nil {
		return err
	}
	m, err := c.deps.Support.Metrics(r.Context(), x.caller.Scope, bu)
	if err != nil {
		return err
	}
	h, err := c.deps.Support.MetricsHistory(r.Context(), x.caller.Scope, bu, hours)
	if err != nil {
		return err
	}
	// The flows' counts per minute, in overviewData's order: deliveries, campaign commands,
	// gateway ingest, attribute triggers, report runs.
	sp := c.deps.Support
	var f [5]support.Throughput
	for i, read := range []func(context.Context, automation.Scope, string, int) (support.Throughput, error){
		sp.Throughput, sp.CommandThroughput, sp.IngestThroughput, sp.TriggerThroughput, sp.ReportThroughput,
	} {
		if f[i], err = read(r.Context(), x.caller.Scope, bu, hours); err != nil {
			return err
		}
	}
	tp, ct, it, trg, rep := f[0], f[1], f[2], f[3], f[4]
	d := overviewData{BusinessUnitID: bu, Hours: hours, Metrics: m, Throughput: tp, Holds: sortedKV(m.OnHoldByReason), History: historyCharts(h, m),
		Chart:    throughputChart(tp, "tp").titled("chart-deliveries", "Deliveries per minute", "Sent %d, failed %d, UNKNOWN %d", "Deliveries by period (UTC)"),
		Commands: ct, CommandChart: throughputChart(ct, "cmd", "Succeeded", "Failed", "UNKNOWN").titled("chart-commands", "Campaign commands per minute",
			"Succeeded %d, failed %d, UNKNOWN %d", "Campaign commands by period (UTC)"),
		Ingest: it, IngestChart: throughputChart(it, "ing", "Accepted", "Rejected", "Duplicate").titled("chart-ingest", "Gateway ingest per minute",
			"Accepted %d, rejected %d, duplicate %d", "Gateway ingest by period (UTC)"),
		Triggers: trg, TriggerChart: throughputChart(trg, "trg", "Fired", "", "").titled("chart-trg", "Attribute triggers per minute", "Fired %d", "Attribute triggers by period (UTC)"),
		Reports: rep, ReportChart: throughputChart(rep, "rep", "Delivered", "Failed", "Skipped").titled("chart-rep", "Report runs per minute",
			"Delivered %d, Failed %d, Skipped %d", "Report runs by period (UTC)")}
	c.render(w, http.StatusOK, "overview", c.data(r, x, "Overview", d))
	return nil
}

type rowsData struct {
	Filter   rowsFilter
	Statuses []string
	Rows     []support.Row
	Order    string
	Next     string
	Searched bool
}

type rowsFilter struct {
	Key, SourceType, SourceGuid, BusinessUnitID, Status string
	OnHold                                              bool
}

// rows: the search (key, source, business unit, status, on hold), newest first, paged by
// the support API's cursor.
func (c *Console) rows(w http.ResponseWriter, r *http.Request, x *call) error {
	q := r.URL.Query()
	in := rowsFilter{Key: strings.TrimSpace(q.Get("key")), SourceType: strings.TrimSpace(q.Get("sourceType")),
		SourceGuid: strings.TrimSpace(q.Get("sourceGuid")), BusinessUnitID: strings.TrimSpace(q.Get("businessUnitId")),
		Status: q.Get("status"), OnHold: q.Get("onHold") == "true"}
	f := support.Filter{SchedulerKey: in.Key, SourceType: in.SourceType, SourceGuid: in.SourceGuid, BusinessUnitID: in.BusinessUnitID,
		Status: automation.Status(in.Status)}
	if in.OnHold {
		t := true
		f.OnHold = &t
	}
	if err := f.Validate(); err != nil {
		return err
	}
	var after *support.Position
	if cur := q.Get("cursor"); cur != "" {
		var pos support.Position
		if err := httpapi.DecodeCursor(cur, f.Canonical(), &pos); err != nil {
			return err
		}
		after = &pos
	}
	page, err := c.deps.Support.Find(r.Context(), x.caller.Scope, f, after, rowsPageSize)
	if err != nil {
		return err
	}
	d := rowsData{Filter: in, Rows: page.Rows, Order: page.Order, Searched: len(q) > 0,
		Statuses: []string{"Pending", "Processing", "Completed", "Failed", "Deactivated", "Cancelled"}}
	if page.Next != nil {
		cur, err := httpapi.EncodeCursor(f.Canonical(), page.Next)
		if err != nil {
			return err
		}
		next := q
		next.Set("cursor", cur)
		d.Next = Base + "/rows?" + next.Encode()
	}
	c.render(w, http.StatusOK, "rows", c.data(r, x, "Rows", d))
	return nil
}

// rowData is a row's detail page.
type rowData struct {
	Detail      support.Detail
	Timeline    []event
	Explain     *support.Explanation
	ExplainNote string
	Diagnostics string
	Actions     []action
	Stale       *staleInfo
}

// event is one entry of a row's timeline.
type event struct {
	On     time.Time
	Kind   string // "attempt", "support", "row"
	Title  string
	Detail string
}

// action is one action form on a row's page, offered when the row's state allows it.
type action struct {
	Name, Label, Help string
}

// staleInfo says what changed when an action was refused for a stale version.
type staleInfo struct {
	Read, Now int64
}

func (c *Console) row(w http.ResponseWriter, r *http.Request, x *call) error {
	d, err := c.rowData(r, x, r.PathValue("id"))
	if err != nil {
		return err
	}
	c.render(w, http.StatusOK, "row", c.data(r, x, fmt.Sprintf("Row %d", d.Detail.Row.ID), d))
	return nil
}

func (c *Console) rowData(r *http.Request, x *call, ref string) (*rowData, error) {
	det, err := c.deps.Support.Get(r.Context(), x.caller.Scope, ref)
	if err != nil {
		return nil, err
	}
	d := &rowData{Detail: det, Timeline: timeline(det), Actions: actionsFor(det.Row)}
	if det.Row.AutomationType == string(automation.TypeReminder) && det.Row.SourceGuid != "" {
		ex, err := c.deps.Support.Explain(r.Context(), x.caller.Scope, det.Row.SourceType, det.Row.SourceGuid)
		if err != nil {
			d.ExplainNote = "explain is not available for this row's source: " + httpapi.ProblemOf(err).Detail
		} else {
			d.Explain = &ex
		}
	}
	if g := det.Diagnostics; g != nil {
		switch {
		case g.Missing:
			d.Diagnostics = "(the diagnostics blob " + g.BlobName + " is missing)"
		case len(g.JSON) > 0:
			var v any
			if json.Unmarshal(g.JSON, &v) == nil {
				b, _ := json.MarshalIndent(v, "", "  ")
				d.Diagnostics = string(b)
			}
		default:
			d.Diagnostics = g.Text
		}
		if g.Truncated {
			d.Diagnostics += "\n… (cut)"
		}
	}
	return d, nil
}

// timeline merges the row's own stamps, its attempts and the support audit in causal order
// (docs/console.md#row-page). Created comes first and Completed last whatever their stamps
// say (the attempts' trace rows are stamped by the worker, the row by the store, and a
// trace stamp can read a few milliseconds before the row's creation: issue 35 showed
// "Attempt 1" before "Created" within the same second). Between them entries sort by
// instant; equal instants by kind (an attempt before the support action that answered it),
// then by attempt number or audit id, so the order is the same on every load.
func timeline(d support.Detail) []event {
	row := d.Row
	type ordered struct {
		ev   event
		rank int   // 0 created, 1 attempt, 2 support, 3 completed
		seq  int64 // attempt number or audit id
	}
	var all []ordered
	all = append(all, ordered{ev: event{On: row.CreatedOn, Kind: "row", Title: "Created", Detail: "scheduled for " + row.ScheduledLocal}})
	for _, a := range d.Attempts {
		title := a.Outcome
		if a.ReasonCode != "" {
			title += " · " + a.ReasonCode
		}
		det := a.Message
		if a.ErrorCode != "" {
			det = strings.TrimSpace(a.ErrorCode + " " + det)
		}
		all = append(all, ordered{ev: event{On: a.FinishedOn, Kind: "attempt", Title: fmt.Sprintf("Attempt %d (v%d): %s", a.Attempt, a.Version, title), Detail: det},
			rank: 1, seq: int64(a.Attempt)})
	}
	for _, a := range d.Audit {
		det := fmt.Sprintf("%s → %s by %s: %s", a.StatusBefore, a.StatusAfter, a.Operator, a.Reason)
		if a.RetrySchedulerKey != "" {
			det += " (new row " + a.RetrySchedulerKey + ")"
		}
		all = append(all, ordered{ev: event{On: a.On, Kind: "support", Title: fmt.Sprintf("Support %s (audit %d, v%d → v%d)", a.Action, a.ID, a.VersionBefore, a.VersionAfter), Detail: det},
			rank: 2, seq: a.ID})
	}
	if row.CompletedOn != nil {
		all = append(all, ordered{ev: event{On: *row.CompletedOn, Kind: "row", Title: "Completed"}, rank: 3})
	}
	slices.SortStableFunc(all, func(a, b ordered) int {
		// Created first, Completed last: nothing precedes a row's creation or follows its end.
		if fa, fb := a.rank == 0, b.rank == 0; fa != fb {
			if fa {
				return -1
			}
			return 1
		}
		if la, lb := a.rank == 3, b.rank == 3; la != lb {
			if la {
				return 1
			}
			return -1
		}
		if c := a.ev.On.Compare(b.ev.On); c != 0 {
			return c
		}
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	out := make([]event, len(all))
	for i, o := range all {
		out[i] = o.ev
	}
	return out
}

// actionsFor offers the actions the row's state allows (the service decides again on submit).
func actionsFor(row support.Row) []action {
	var out []action
	switch {
	case row.Status == "Processing":
		return nil
	case row.OnHold:
		out = append(out, action{"release", "Release hold", "Clears the support hold: a Failed row becomes Pending and is due at once."})
	}
	switch row.Status {
	case "Pending":
		if row.OnHold || row.NextRetryOn != nil {
			out = append(out, action{"retry", "Retry now", "Clears the hold and the backoff wait: due at once."})
		} else {
			out = append(out, action{"run-now", "Run now", "Makes this Pending row due at once; it is revalidated when it runs."})
		}
		out = append(out, action{"cancel", "Cancel", "Never sends this occurrence; a later event with the same input leaves it cancelled."})
	case "Failed":
		out = append(out, action{"retry", "Retry now", "Makes the row Pending and due at once."},
			action{"cancel", "Cancel", "Never sends this occurrence."})
	case "Deactivated":
		out = append(out, action{"retry", "Send again", "A new support-retry row is due now; this row keeps its state."},
			action{"cancel", "Cancel", "Records it as cancelled by support."})
	case "Completed", "Cancelled":
		out = append(out, action{"retry", "Send again", "A new support-retry row is due now; this row keeps its state."})
	}
	return out
}

// act runs release, retry, cancel or run now with the version the page was read at.
func (c *Console) act(w http.ResponseWriter, r *http.Request, x *call) error {
	svc := c.deps.Support
	fn, ok := map[string]func(context.Context, automation.Scope, support.ActRequest) (support.ActResult, error){
		"release": svc.Release, "retry": svc.Retry, "cancel": svc.Cancel, "run-now": svc.RunNow,
	}[r.PathValue("action")]
	if !ok {
		return automation.Errorf(automation.CodeNotFound, "no action %q", r.PathValue("action"))
	}
	ref := r.PathValue("id")
	v := strings.TrimSpace(r.PostForm.Get("version"))
	var version int64
	var err error
	if v == "" {
		err = errNoVersion
	} else if version, err = strconv.ParseInt(v, 10, 64); err != nil || version < 1 {
		err = &automation.Error{Code: automation.CodeMalformed, Field: "version", Message: "must be the row's version, a positive integer"}
	}
	var res support.ActResult
	if err == nil {
		res, err = fn(r.Context(), x.caller.Scope, support.ActRequest{Ref: ref, IfMatch: version, Operator: operator(r, x), Reason: r.PostForm.Get("reason")})
	}
	d, derr := c.rowData(r, x, ref)
	if derr != nil {
		if err != nil {
			return err // the row itself is not there (404) or the first error says more
		}
		return derr
	}
	p := c.data(r, x, fmt.Sprintf("Row %d", d.Detail.Row.ID), d)
	if err != nil {
		p.Error = problemFor(0, "", "", err)
		if isStale(err) {
			d.Stale = &staleInfo{Read: version, Now: d.Detail.Row.Version}
			p.Error.Title = "The row changed since you loaded it"
			p.Error.Detail = fmt.Sprintf("You acted on version %d; the row is now at version %d. Nothing was done. "+
				"Look at the row as it is now (below) and act again if it still needs it.", version, d.Detail.Row.Version)
		}
		p.Status = p.Error.Status
		c.render(w, p.Error.Status, "row", p)
		return nil
	}
	p.Notice = fmt.Sprintf("%s done: row %d is %s (version %d, audit %d).", res.Action, res.Row.ID, res.Row.Status, res.Row.Version, res.AuditID)
	if res.RetryRow != nil {
		p.Notice += fmt.Sprintf(" New row %d.", res.RetryRow.ID)
	}
	if res.Note != "" {
		p.Notice += " " + res.Note
	}
	c.render(w, http.StatusOK, "row", p)
	return nil
}

type releaseData struct {
	Form   map[string]string
	Result *support.ReleaseResult
	Watch  string
	Max    int
}

func (c *Console) releaseForm(w http.ResponseWriter, r *http.Request, x *call) error {
	c.render(w, http.StatusOK, "releases", c.data(r, x, "Paced release", releaseData{Form: map[string]string{}, Max: c.deps.Support.Config().MaxReleasePerMinute}))
	return nil
}

// release sets up a paced release of held rows and links to its watch page.
func (c *Console) release(w http.ResponseWriter, r *http.Request, x *call) error {
	f := r.PostForm
	form := map[string]string{}
	for _, k := range []string{"businessUnitId", "sourceType", "sourceGuid", "status", "failureReasonCode", "ratePerMinute", "batchSize", "maxRows", "reason"} {
		form[k] = strings.TrimSpace(f.Get(k))
	}
	d := releaseData{Form: form, Max: c.deps.Support.Config().MaxReleasePerMinute}
	num := func(k string) (int, error) {
		if form[k] == "" {
			return 0, nil
		}
		n, err := strconv.Atoi(form[k])
		if err != nil || n < 1 {
			return 0, automation.Invalid(k, "must be a whole number of at least 1 (leave it empty for the default)")
		}
		return n, nil
	}
	rate, e1 := num("ratePerMinute")
	batch, e2 := num("batchSize")
	maxRows, e3 := num("maxRows")
	err := automation.InvalidFields(e1, e2, e3)
	var res support.ReleaseResult
	if err == nil {
		res, err = c.deps.Support.ReleaseMany(r.Context(), x.caller.Scope, support.ReleaseRequest{
			Filter: support.ReleaseFilter{BusinessUnitID: form["businessUnitId"], SourceType: form["sourceType"], SourceGuid: form["sourceGuid"],
				Status: automation.Status(form["status"]), FailureReasonCode: automation.ReasonCode(form["failureReasonCode"])},
			RatePerMinute: rate, BatchSize: batch, MaxRows: maxRows, Operator: operator(r, x), Reason: form["reason"]})
	}
	p := c.data(r, x, "Paced release", &d)
	if err != nil {
		if automation.CodeOf(err) == automation.CodeNotFound {
			return err
		}
		p.Error = problemFor(0, "", "", err)
		c.render(w, p.Error.Status, "releases", p)
		return nil
	}
	d.Result = &res
	d.Watch = watchURL(res)
	p.Notice = fmt.Sprintf("Release %s: %d row(s) in %d batch(es).", res.ID, res.Released, res.Batches)
	c.render(w, http.StatusOK, "releases", p)
	return nil
}

func watchURL(res support.ReleaseResult) string {
	var b strings.Builder
	b.WriteString(Base + "/releases/watch?release=" + res.ID)
	for _, r := range res.Rows {
		fmt.Fprintf(&b, "&row=%d", r.ID)
	}
	return b.String()
}

type watchData struct {
	Release string
	Rows    []support.Row
	Missing int
	Done    int
	Waiting int
	Total   int
	Percent int
}

// watch shows where the rows of a paced release are now (the page refreshes itself).
func (c *Console) watch(w http.ResponseWriter, r *http.Request, x *call) error {
	q := r.URL.Query()
	ids := q["row"]
	if len(ids) > 100 {
		return automation.Invalid("row", "at most 100 rows are watched")
	}
	d := watchData{Release: q.Get("release")}
	for _, id := range ids {
		det, err := c.deps.Support.Get(r.Context(), x.caller.Scope, id)
		if err != nil {
			d.Missing++ // unknown or outside the scope: never shown
			continue
		}
		d.Rows = append(d.Rows, det.Row)
		switch det.Row.Status {
		case "Pending", "Processing":
			d.Waiting++
		default:
			d.Done++
		}
	}
	d.Total = len(d.Rows)
	if d.Total > 0 {
		d.Percent = d.Done * 100 / d.Total
	}
	c.render(w, http.StatusOK, "watch", c.data(r, x, "Paced release progress", d))
	return nil
}

type unknownData struct {
	BusinessUnitID string
	Items          []delivery.UnknownDelivery
	Next           string
}

// unknown lists the UNKNOWN deliveries of a business unit, each with a resolve form.
func (c *Console) unknown(w http.ResponseWriter, r *http.Request, x *call) error {
	d, err := c.unknownData(r, x, r.URL.Query().Get("businessUnitId"), r.URL.Query().Get("cursor"))
	if err != nil {
		return err
	}
	c.render(w, http.StatusOK, "unknown", c.data(r, x, "UNKNOWN deliveries", d))
	return nil
}

func (c *Console) unknownData(r *http.Request, x *call, bu, cursor string) (*unknownData, error) {
	bu = strings.TrimSpace(bu)
	d := &unknownData{BusinessUnitID: bu}
	if bu == "" {
		return d, nil
	}
	if err := checkBU(x, bu); err != nil {
		return nil, err
	}
	cq := "unknown:" + bu
	var after int64
	if cursor != "" {
		if err := httpapi.DecodeCursor(cursor, cq, &after); err != nil {
			return nil, err
		}
	}
	page, err := c.deps.Deliveries.ListUnknown(r.Context(), bu, after, delivery.DefaultUnknownPage)
	if err != nil {
		return nil, err
	}
	d.Items = page.Items
	if page.NextAfter != 0 {
		cur, err := httpapi.EncodeCursor(cq, page.NextAfter)
		if err != nil {
			return nil, err
		}
		d.Next = Base + "/unknown?businessUnitId=" + bu + "&cursor=" + cur
	}
	return d, nil
}

// resolve records an operator's verdict on an UNKNOWN delivery (If-Match: the listed version).
func (c *Console) resolve(w http.ResponseWriter, r *http.Request, x *call) error {
	f := r.PostForm
	bu := strings.TrimSpace(f.Get("businessUnitId"))
	if bu == "" {
		return automation.Invalid("businessUnitId", "is required")
	}
	if err := checkBU(x, bu); err != nil {
		return err
	}
	version, err := strconv.ParseInt(strings.TrimSpace(f.Get("version")), 10, 64)
	if err != nil {
		return errNoVersion
	}
	key := r.PathValue("deliveryKey")
	j, err := c.deps.Deliveries.Resolve(r.Context(), delivery.ResolveRequest{BusinessUnitID: bu, DeliveryKey: key, ExpectedVersion: version,
		Status: store.NotificationStatus(f.Get("status")), Operator: operator(r, x), Reason: f.Get("reason"), ProviderReference: strings.TrimSpace(f.Get("providerReference"))})
	if err != nil && httpapi.StatusOf(err) == http.StatusNotFound {
		return err
	}
	d, derr := c.unknownData(r, x, bu, "")
	if derr != nil {
		return derr
	}
	p := c.data(r, x, "UNKNOWN deliveries", d)
	if err != nil {
		p.Error = problemFor(0, "", "", err)
		if isStale(err) {
			p.Error.Title = "The delivery changed since you loaded it"
			p.Error.Detail = "Someone or something recorded an outcome for it after the list was shown. Nothing was done; the list below is as it is now."
		}
		c.render(w, p.Error.Status, "unknown", p)
		return nil
	}
	p.Notice = fmt.Sprintf("Delivery %s resolved as %s by %s.", j.DeliveryKey, j.Status, j.ResolvedBy)
	c.render(w, http.StatusOK, "unknown", p)
	return nil
}

type reportsData struct {
	BusinessUnitID string
	Subscriptions  []report.View
	Subscription   string
	Runs           []report.RunView
	Failed         []report.RunView
	Rollouts       []report.Rollout
}

// reports: subscriptions, the runs of one (with the key whose ownership guards each), the
// failed runs of a business unit and the rollout modes that decide ownership.
func (c *Console) reports(w http.ResponseWriter, r *http.Request, x *call) error {
	q := r.URL.Query()
	d := reportsData{BusinessUnitID: strings.TrimSpace(q.Get("businessUnitId")), Subscription: strings.TrimSpace(q.Get("subscription"))}
	if err := checkBU(x, d.BusinessUnitID); err != nil {
		return err
	}
	var err error
	if d.Subscriptions, _, err = c.deps.Reports.List(r.Context(), x.caller.Scope, d.BusinessUnitID, "", 50); err != nil {
		return err
	}
	if d.Subscription != "" {
		if d.Runs, _, err = c.deps.Reports.Runs(r.Context(), x.caller.Scope, d.Subscription, 0, 20); err != nil {
			return err
		}
	}
	if d.BusinessUnitID != "" {
		if d.Failed, _, err = c.deps.Reports.FailedRuns(r.Context(), x.caller.Scope, d.BusinessUnitID, 0, 20); err != nil {
			return err
		}
	}
	if d.Rollouts, err = c.deps.Reports.ListRollouts(r.Context(), x.caller.Scope, 50); err != nil {
		return err
	}
	c.render(w, http.StatusOK, "reports", c.data(r, x, "Reports", d))
	return nil
}
