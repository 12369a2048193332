package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/support"
	"github.com/automation-platform/automation/shared/supportapi"
)

const supportUsage = `usage: automation support <command> [flags] [arguments]

The support API from a terminal (a running serve, or the Function App's SupportApi).

commands:
  find      rows by filters: -key K, -source TYPE/GUID, -bu ID, -status S, -on-hold,
            -from T, -to T (RFC 3339), -limit N, -cursor C
  show      ID                  one row (Id or Guid): attempts, audit, deliveries, diagnostics
  explain   TYPE GUID           why a source's reminders did or did not go out
  release   ID -reason R        release one row's support hold
  release   -reason R -rate N [-batch N] [-max N] and at least one filter of
            -bu, -source, -status, -failure-reason, -from, -to: a paced release
  retry     ID -reason R        retry now (a row that ended gets a support-retry row)
  cancel    ID -reason R        cancel a row
  metrics   [-bu ID]            the pipeline's health figures

flags of every command:
  -url URL              the API's base URL (default http://127.0.0.1:7071)
  -token T              bearer token (default AUTOMATION_API_TOKEN)
  -function-key K       the SupportApi function's key (x-functions-key), for the Function App
  -operator NAME        your name for the audit (required by release, retry, cancel)
  -business-units LIST  narrow what you see (X-Automation-Business-Units)
  -version V            (release, retry, cancel) the version you read; default: read it now
  -json                 print the API's JSON instead of tables

Exit codes: 0 ok, 1 the API refused or failed, 2 bad usage.
`

// supportClient calls the support API over HTTP.
type supportClient struct {
	base     string
	token    string
	fnKey    string // the Functions host's function key (authLevel "function"), if any
	operator string
	units    string
	http     *http.Client
}

// apiError is a non-2xx answer (RFC 9457 problem details when the API sent them).
type apiError struct {
	status  int
	problem httpapi.Problem
	body    string
}

func (e *apiError) Error() string {
	p := e.problem
	if p.Title == "" {
		return clean(fmt.Sprintf("%d %s: %s", e.status, http.StatusText(e.status), strings.TrimSpace(e.body)))
	}
	msg := fmt.Sprintf("%d %s", e.status, clean(p.Title))
	if p.Detail != "" {
		msg += ": " + clean(p.Detail)
	}
	for _, f := range p.Errors {
		if f.Field != "" && !strings.Contains(p.Detail, f.Message) {
			msg += "\n  " + clean(f.Field) + ": " + clean(f.Message)
		}
	}
	return msg
}

// clean makes text from the API safe for a terminal and a table cell: control characters
// (terminal escape sequences, tabs and new lines included) and bidirectional overrides are
// shown escaped ("\x1b", "\t", "\n"), never written as they are. The text comes from domain
// events and operators (event ids, data, reasons).
func clean(s string) string {
	return cleanText(s, false)
}

// cleanText is clean, keeping new lines when lines is true (a multi-line block).
func cleanText(s string, lines bool) string {
	unsafe := func(r rune) bool {
		return (unicode.IsControl(r) && !(lines && r == '\n')) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == utf8.RuneError
	}
	if strings.IndexFunc(s, unsafe) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !unsafe(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r) // '\x1b', '\t', '\u202e'
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// do sends one request; body (when not nil) is JSON. It returns the raw body and headers of
// a 2xx answer, or an *apiError.
func (c *supportClient) do(ctx context.Context, method, path string, query url.Values, body any, header map[string]string) ([]byte, http.Header, error) {
	u := strings.TrimRight(c.base, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.fnKey != "" {
		req.Header.Set("x-functions-key", c.fnKey)
	}
	if c.operator != "" {
		req.Header.Set(httpapi.HeaderOperator, c.operator)
	}
	if c.units != "" {
		req.Header.Set(httpapi.HeaderBusinessUnits, c.units)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode/100 != 2 {
		e := &apiError{status: resp.StatusCode, body: string(b)}
		_ = json.Unmarshal(b, &e.problem)
		return nil, nil, e
	}
	return b, resp.Header, nil
}

// supportCmd runs `automation support ...`.
func supportCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, supportUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd := args[0]
	fs := flag.NewFlagSet("support "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, supportUsage) }
	base := fs.String("url", "http://127.0.0.1:7071", "")
	token := fs.String("token", "", "")
	fnKey := fs.String("function-key", "", "")
	op := fs.String("operator", "", "")
	units := fs.String("business-units", "", "")
	asJSON := fs.Bool("json", false, "")
	var (
		key, source, bu, status, from, to, cursor, reason, failure string
		onHold                                                     bool
		limit, version, rate, batch, maxRows                       int64
	)
	switch cmd {
	case "find":
		fs.StringVar(&key, "key", "", "")
		fs.StringVar(&source, "source", "", "")
		fs.StringVar(&bu, "bu", "", "")
		fs.StringVar(&status, "status", "", "")
		fs.BoolVar(&onHold, "on-hold", false, "")
		fs.StringVar(&from, "from", "", "")
		fs.StringVar(&to, "to", "", "")
		fs.Int64Var(&limit, "limit", 0, "")
		fs.StringVar(&cursor, "cursor", "", "")
	case "release":
		fs.StringVar(&source, "source", "", "")
		fs.StringVar(&bu, "bu", "", "")
		fs.StringVar(&status, "status", "", "")
		fs.StringVar(&failure, "failure-reason", "", "")
		fs.StringVar(&from, "from", "", "")
		fs.StringVar(&to, "to", "", "")
		fs.Int64Var(&rate, "rate", 0, "")
		fs.Int64Var(&batch, "batch", 0, "")
		fs.Int64Var(&maxRows, "max", 0, "")
		fallthrough
	case "retry", "cancel":
		fs.StringVar(&reason, "reason", "", "")
		fs.Int64Var(&version, "version", 0, "")
	case "metrics":
		fs.StringVar(&bu, "bu", "", "")
	case "show", "explain":
	default:
		fmt.Fprintf(stderr, "automation support: unknown command %q\n\n%s", cmd, supportUsage)
		return 2
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "automation support %s: %s\n", cmd, fmt.Sprintf(format, a...))
		return 2
	}
	if *token == "" {
		cfg, err := config.Load(getenv)
		if err != nil {
			fmt.Fprintf(stderr, "automation support: configuration:\n%v\n", err)
			return 2
		}
		*token = cfg.APIToken
	}
	c := &supportClient{base: *base, token: *token, fnKey: *fnKey, operator: *op, units: *units, http: &http.Client{Timeout: time.Minute}}
	out := &supportOut{w: stdout, json: *asJSON}
	var runErr error
	switch cmd {
	case "find":
		if len(pos) != 0 {
			return usageErr("takes no arguments, only flags")
		}
		q := url.Values{}
		set := func(k, v string) {
			if v != "" {
				q.Set(k, v)
			}
		}
		set("schedulerKey", key)
		if source != "" {
			typ, guid, ok := strings.Cut(source, "/")
			if !ok || typ == "" || guid == "" {
				return usageErr("-source must be TYPE/GUID, got %q", source)
			}
			set("sourceType", typ)
			set("sourceGuid", guid)
		}
		set("businessUnitId", bu)
		set("status", status)
		if onHold {
			q.Set("onHold", "true")
		}
		set("scheduledFrom", from)
		set("scheduledTo", to)
		if limit != 0 {
			q.Set("limit", strconv.FormatInt(limit, 10))
		}
		set("cursor", cursor)
		runErr = out.find(c.do(ctx, http.MethodGet, supportapi.Prefix+"scheduler-rows", q, nil, nil))
	case "show":
		if len(pos) != 1 {
			return usageErr("needs the row's Id or Guid")
		}
		runErr = out.show(c.do(ctx, http.MethodGet, supportapi.Prefix+"scheduler-rows/"+url.PathEscape(pos[0]), nil, nil, nil))
	case "explain":
		if len(pos) != 2 {
			return usageErr("needs TYPE and GUID of the source, e.g. explain PoliceVetting 3b2d6f0e-…")
		}
		runErr = out.explain(c.do(ctx, http.MethodGet, supportapi.Prefix+"explain", url.Values{"sourceType": {pos[0]}, "sourceGuid": {pos[1]}}, nil, nil))
	case "metrics":
		if len(pos) != 0 {
			return usageErr("takes no arguments")
		}
		q := url.Values{}
		if bu != "" {
			q.Set("businessUnitId", bu)
		}
		runErr = out.metrics(c.do(ctx, http.MethodGet, supportapi.Prefix+"metrics", q, nil, nil))
	case "release", "retry", "cancel":
		if c.operator == "" {
			return usageErr("-operator is required: actions are audited with your name")
		}
		if cmd == "release" && len(pos) == 0 {
			if version != 0 {
				return usageErr("-version applies to one row, not to a paced release")
			}
			// Only the counts given on the command line are sent (the API refuses 0).
			setFlags := map[string]bool{}
			fs.Visit(func(f *flag.Flag) { setFlags[f.Name] = true })
			count := func(name string, v int64) *int {
				if !setFlags[name] {
					return nil
				}
				n := int(v)
				return &n
			}
			body := supportapi.ReleaseBody{Reason: reason, RatePerMinute: count("rate", rate), BatchSize: count("batch", batch),
				MaxRows: count("max", maxRows), Filter: support.ReleaseFilter{BusinessUnitID: bu}}
			body.Filter.Status = automation.Status(status)
			body.Filter.FailureReasonCode = automation.ReasonCode(failure)
			if source != "" {
				typ, guid, ok := strings.Cut(source, "/")
				if !ok {
					return usageErr("-source must be TYPE/GUID, got %q", source)
				}
				body.Filter.SourceType, body.Filter.SourceGuid = typ, guid
			}
			for _, t := range []struct {
				flag, v string
				dst     **time.Time
			}{{"-from", from, &body.Filter.ScheduledFrom}, {"-to", to, &body.Filter.ScheduledTo}} {
				if t.v == "" {
					continue
				}
				at, err := time.Parse(time.RFC3339, t.v)
				if err != nil {
					return usageErr("%s must be an RFC 3339 instant such as 2026-11-30T09:00:00Z", t.flag)
				}
				*t.dst = &at
			}
			runErr = out.released(c.do(ctx, http.MethodPost, supportapi.Prefix+"releases", nil, body, nil))
			break
		}
		if cmd == "release" && (rate != 0 || batch != 0 || maxRows != 0 || bu != "" || source != "" || status != "" || failure != "" || from != "" || to != "") {
			return usageErr("filters and -rate/-batch/-max are for a paced release, without a row id")
		}
		if len(pos) != 1 {
			return usageErr("needs the row's Id or Guid")
		}
		ref := url.PathEscape(pos[0])
		if version == 0 {
			_, hdr, err := c.do(ctx, http.MethodGet, supportapi.Prefix+"scheduler-rows/"+ref, nil, nil, nil)
			if err != nil {
				runErr = err
				break
			}
			v, err := strconv.ParseInt(strings.Trim(hdr.Get("ETag"), `"`), 10, 64)
			if err != nil {
				runErr = fmt.Errorf("the API sent no usable ETag (%q)", hdr.Get("ETag"))
				break
			}
			version = v
		}
		runErr = out.acted(c.do(ctx, http.MethodPost, supportapi.Prefix+"scheduler-rows/"+ref+"/"+cmd, nil,
			supportapi.ActBody{Reason: reason}, map[string]string{"If-Match": httpapi.ETag(version)}))
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "automation support %s: %v\n", cmd, runErr)
		return 1
	}
	return 0
}

// parseInterspersed parses flags wherever they appear among the arguments and returns the
// positional ones in order.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// supportOut renders answers as tables (or the raw JSON with -json).
type supportOut struct {
	w    io.Writer
	json bool
}

func (o *supportOut) raw(body []byte) {
	var v any
	if json.Unmarshal(body, &v) == nil {
		b, _ := json.MarshalIndent(v, "", "  ")
		body = b
	}
	fmt.Fprintf(o.w, "%s\n", body)
}

func (o *supportOut) table(header string, rows [][]string) {
	tw := tabwriter.NewWriter(o.w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = clean(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
}

func utcText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04Z")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (o *supportOut) find(body []byte, _ http.Header, err error) error {
	if err != nil {
		return err
	}
	if o.json {
		o.raw(body)
		return nil
	}
	var page supportapi.FindResponse
	if err := json.Unmarshal(body, &page); err != nil {
		return err
	}
	rows := make([][]string, 0, len(page.Rows))
	for _, r := range page.Rows {
		hold := ""
		if r.OnHold {
			hold = "HOLD"
		}
		why := r.ReasonCode
		if why == "" {
			why = r.FailureReasonCode
		}
		rows = append(rows, []string{strconv.FormatInt(r.ID, 10), r.Status, orDash(hold), r.BusinessUnitID, utcText(r.ScheduledOn),
			orDash(r.ScheduledLocal), orDash(why), strconv.FormatInt(r.Version, 10), r.SchedulerKey})
	}
	o.table("ID\tSTATUS\tHOLD\tBU\tSCHEDULED (UTC)\tLOCAL\tREASON\tVERSION\tSCHEDULER KEY", rows)
	order := "newest first"
	if page.Order == support.OrderScheduledOn {
		order = "in schedule order"
	}
	fmt.Fprintf(o.w, "%d row(s), %s\n", len(page.Rows), order)
	if page.NextCursor != "" {
		fmt.Fprintf(o.w, "more: add -cursor %s\n", clean(page.NextCursor))
	}
	return nil
}

func (o *supportOut) show(body []byte, _ http.Header, err error) error {
	if err != nil {
		return err
	}
	if o.json {
		o.raw(body)
		return nil
	}
	var d support.Detail
	if err := json.Unmarshal(body, &d); err != nil {
		return err
	}
	r := d.Row
	o.table("FIELD\tVALUE", [][]string{
		{"id", strconv.FormatInt(r.ID, 10)}, {"guid", r.Guid}, {"key", r.SchedulerKey},
		{"status", r.Status}, {"reason", orDash(r.ReasonCode)}, {"failure", orDash(r.FailureReasonCode)},
		{"on hold", strconv.FormatBool(r.OnHold)}, {"business unit", r.BusinessUnitID},
		{"scheduled", utcText(r.ScheduledOn) + "  " + r.ScheduledLocal}, {"retries", strconv.Itoa(r.RetryCount)},
		{"version", strconv.FormatInt(r.Version, 10)}, {"history", r.History.Summary},
	})
	if len(d.Attempts) > 0 {
		fmt.Fprintln(o.w, "\nattempts:")
		rows := make([][]string, 0, len(d.Attempts))
		for _, a := range d.Attempts {
			rows = append(rows, []string{strconv.Itoa(a.Attempt), strconv.FormatInt(a.Version, 10), a.Outcome, orDash(a.ReasonCode), utcText(a.StartedOn), orDash(a.Message)})
		}
		o.table("ATTEMPT\tVERSION\tOUTCOME\tREASON\tSTARTED\tMESSAGE", rows)
	}
	if len(d.Audit) > 0 {
		fmt.Fprintln(o.w, "\nsupport actions:")
		rows := make([][]string, 0, len(d.Audit))
		for _, a := range d.Audit {
			rows = append(rows, []string{strconv.FormatInt(a.ID, 10), a.Action, a.Operator, utcText(a.On), a.StatusBefore + " → " + a.StatusAfter, a.Reason})
		}
		o.table("AUDIT\tACTION\tOPERATOR\tON\tSTATUS\tREASON", rows)
	}
	if len(d.Deliveries) > 0 {
		fmt.Fprintln(o.w, "\ndeliveries:")
		rows := make([][]string, 0, len(d.Deliveries))
		for _, x := range d.Deliveries {
			sent := "-"
			if x.SentOn != nil {
				sent = utcText(*x.SentOn)
			}
			rows = append(rows, []string{x.DeliveryKey, x.Channel, x.Recipient, x.Status, sent})
		}
		o.table("DELIVERY KEY\tCHANNEL\tRECIPIENT\tSTATUS\tSENT", rows)
	}
	if d.Diagnostics != nil {
		fmt.Fprintf(o.w, "\ndiagnostics %s:\n", clean(d.Diagnostics.BlobName))
		switch {
		case d.Diagnostics.Missing:
			fmt.Fprintln(o.w, "  (blob not found)")
		case len(d.Diagnostics.JSON) > 0:
			var v any
			_ = json.Unmarshal(d.Diagnostics.JSON, &v)
			b, _ := json.MarshalIndent(v, "  ", "  ")
			fmt.Fprintf(o.w, "  %s\n", b)
		default:
			fmt.Fprintf(o.w, "  %s\n", cleanText(d.Diagnostics.Text, true))
		}
	}
	for _, n := range d.Notes {
		fmt.Fprintln(o.w, "note: "+clean(n))
	}
	return nil
}

func (o *supportOut) explain(body []byte, _ http.Header, err error) error {
	if err != nil {
		return err
	}
	if o.json {
		o.raw(body)
		return nil
	}
	var x support.Explanation
	if err := json.Unmarshal(body, &x); err != nil {
		return err
	}
	fmt.Fprintf(o.w, "%s %s in %s (%s, local today %s), as of %s\n", clean(x.Source.SourceType), clean(x.Source.SourceGuid), clean(x.BusinessUnit.ID),
		clean(x.BusinessUnit.TimeZoneID), x.BusinessUnit.LocalToday, utcText(x.AsOf))
	for _, s := range x.Summary {
		fmt.Fprintln(o.w, "  "+clean(s))
	}
	for _, s := range x.Settings {
		value := "-"
		if s.TriggerValue != nil {
			value = fmt.Sprint(s.TriggerValue)
		}
		fmt.Fprintf(o.w, "\n%s (%s, %s=%s, offsets %v at %s):\n", clean(s.Name), activeText(s.IsActive), clean(s.TriggerKey), clean(value), s.OffsetsDays, orDash(s.SendLocalTime))
		if s.Why != "" {
			fmt.Fprintln(o.w, "  "+clean(s.Why))
		}
		rows := make([][]string, 0, len(s.Occurrences))
		for _, oc := range s.Occurrences {
			row := "-"
			if oc.Row != nil {
				row = strconv.FormatInt(oc.Row.ID, 10)
			}
			rows = append(rows, []string{oc.ScheduledLocal, utcText(oc.ScheduledOn), oc.Outcome, orDash(oc.ReasonCode), row, oc.Explanation})
		}
		if len(rows) > 0 {
			o.table("LOCAL\tUTC\tOUTCOME\tREASON\tROW\tWHY", rows)
		}
	}
	return nil
}

func activeText(b bool) string {
	if b {
		return "active"
	}
	return "inactive"
}

func (o *supportOut) metrics(body []byte, _ http.Header, err error) error {
	if err != nil {
		return err
	}
	if o.json {
		o.raw(body)
		return nil
	}
	var m support.Metrics
	if err := json.Unmarshal(body, &m); err != nil {
		return err
	}
	age := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return (time.Duration(*p) * time.Second).String()
	}
	rows := [][]string{
		{"business units", strings.Join(m.BusinessUnits, ",")},
		{"pending due now", strconv.Itoa(m.PendingDueNow)},
		{"oldest due age", age(m.OldestDueAgeSeconds)},
		{"processing", strconv.Itoa(m.Processing)},
		{"expired leases", strconv.Itoa(m.ExpiredLeases)},
		{"on support hold", strconv.Itoa(m.OnHold) + byReason(m.OnHoldByReason)},
		{"failed", strconv.Itoa(m.Failed)},
		{"deactivated (24 h)", strconv.Itoa(m.DeactivatedLast24h) + byReason(m.DeactivatedByReasonLast24h)},
	}
	if m.OutboxUnsent != nil {
		rows = append(rows, []string{"unsent outbox", strconv.Itoa(*m.OutboxUnsent)}, []string{"oldest unsent age", age(m.OutboxOldestAgeSeconds)})
	} else {
		rows = append(rows, []string{"unsent outbox", "- (platform-wide: only for callers that see every business unit)"})
	}
	rows = append(rows, []string{"UNKNOWN deliveries", strconv.Itoa(m.UnknownDeliveries)})
	o.table("METRIC\tVALUE", rows)
	if len(m.Capped) > 0 {
		fmt.Fprintf(o.w, "at least (reached the cap of %d): %s\n", m.Cap, strings.Join(m.Capped, ", "))
	}
	return nil
}

func byReason(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", orDash(k), m[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func (o *supportOut) acted(body []byte, hdr http.Header, err error) error {
	if err != nil {
		return err
	}
	if o.json {
		o.raw(body)
		return nil
	}
	var r support.ActResult
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	fmt.Fprintf(o.w, "%s: row %d is %s (version %d, audit %d)\n", clean(r.Action), r.Row.ID, clean(r.Row.Status), r.Row.Version, r.AuditID)
	if r.RetryRow != nil {
		fmt.Fprintf(o.w, "support-retry row %d: %s, due %s\n", r.RetryRow.ID, clean(r.RetryRow.SchedulerKey), utcText(r.RetryRow.ScheduledOn))
	}
	if r.Note != "" {
		fmt.Fprintln(o.w, "note: "+clean(r.Note))
	}
	return nil
}

func (o *supportOut) released(body []byte, _ http.Header, err error) error {
	if err != nil {
		return err
	}
	if o.json {
		o.raw(body)
		return nil
	}
	var r support.ReleaseResult
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	fmt.Fprintf(o.w, "release %s: %d row(s) in %d batch(es) of %d, %d/min (one batch every %gs)\n", clean(r.ID), r.Released, r.Batches, r.BatchSize, r.RatePerMinute, r.IntervalSeconds)
	if r.FirstDueOn != nil && r.LastDueOn != nil {
		fmt.Fprintf(o.w, "due from %s to %s\n", utcText(*r.FirstDueOn), utcText(*r.LastDueOn))
	}
	if len(r.Rows) > 0 {
		rows := make([][]string, 0, len(r.Rows))
		for _, x := range r.Rows {
			rows = append(rows, []string{strconv.FormatInt(x.ID, 10), utcText(x.DueOn), x.SchedulerKey})
		}
		o.table("ID\tDUE\tSCHEDULER KEY", rows)
	}
	if r.More {
		fmt.Fprintln(o.w, "more rows may match: run the release again")
	}
	return nil
}
