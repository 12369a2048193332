package supportclient

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/automation-platform/automation/shared/api/supportapi"
	"github.com/automation-platform/automation/shared/support"
)

// Clean makes text from the API safe for a terminal and a table cell: control characters
// (terminal escape sequences, tabs and new lines included) and bidirectional overrides are
// shown escaped ("\x1b", "\t", "\n"), never written as they are. The text comes from domain
// events and operators (event ids, data, reasons).
func Clean(s string) string {
	return cleanText(s, false)
}

// cleanText is Clean, keeping new lines when lines is true (a multi-line block).
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

// Printer renders answers for a terminal: tables, or with JSON the API's JSON indented.
// Text from the API is escaped by Clean.
type Printer struct {
	W    io.Writer
	JSON bool
}

func (p *Printer) raw(body []byte) {
	var v any
	if json.Unmarshal(body, &v) == nil {
		b, _ := json.MarshalIndent(v, "", "  ")
		body = b
	}
	fmt.Fprintf(p.W, "%s\n", body)
}

func (p *Printer) table(header string, rows [][]string) {
	tw := tabwriter.NewWriter(p.W, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = Clean(c)
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

// Find renders a find answer (supportapi.FindResponse).
func (p *Printer) Find(a Answer) error {
	page, ok, err := decodeAnswer[supportapi.FindResponse](p, a)
	if !ok {
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
	p.table("ID\tSTATUS\tHOLD\tBU\tSCHEDULED (UTC)\tLOCAL\tREASON\tVERSION\tSCHEDULER KEY", rows)
	order := "newest first"
	if page.Order == support.OrderScheduledOn {
		order = "in schedule order"
	}
	fmt.Fprintf(p.W, "%d row(s), %s\n", len(page.Rows), order)
	if page.NextCursor != "" {
		fmt.Fprintf(p.W, "more: add -cursor %s\n", Clean(page.NextCursor))
	}
	return nil
}

// Show renders one row (support.Detail): fields, attempts, audit, deliveries, diagnostics.
func (p *Printer) Show(a Answer) error {
	d, ok, err := decodeAnswer[support.Detail](p, a)
	if !ok {
		return err
	}
	r := d.Row
	p.table("FIELD\tVALUE", [][]string{
		{"id", strconv.FormatInt(r.ID, 10)}, {"guid", r.Guid}, {"key", r.SchedulerKey},
		{"status", r.Status}, {"reason", orDash(r.ReasonCode)}, {"failure", orDash(r.FailureReasonCode)},
		{"on hold", strconv.FormatBool(r.OnHold)}, {"business unit", r.BusinessUnitID},
		{"scheduled", utcText(r.ScheduledOn) + "  " + r.ScheduledLocal}, {"retries", strconv.Itoa(r.RetryCount)},
		{"version", strconv.FormatInt(r.Version, 10)}, {"history", r.History.Summary},
	})
	if len(d.Attempts) > 0 {
		fmt.Fprintln(p.W, "\nattempts:")
		rows := make([][]string, 0, len(d.Attempts))
		for _, a := range d.Attempts {
			rows = append(rows, []string{strconv.Itoa(a.Attempt), strconv.FormatInt(a.Version, 10), a.Outcome, orDash(a.ReasonCode), utcText(a.StartedOn), orDash(a.Message)})
		}
		p.table("ATTEMPT\tVERSION\tOUTCOME\tREASON\tSTARTED\tMESSAGE", rows)
	}
	if len(d.Audit) > 0 {
		fmt.Fprintln(p.W, "\nsupport actions:")
		rows := make([][]string, 0, len(d.Audit))
		for _, a := range d.Audit {
			rows = append(rows, []string{strconv.FormatInt(a.ID, 10), a.Action, a.Operator, utcText(a.On), a.StatusBefore + " → " + a.StatusAfter, a.Reason})
		}
		p.table("AUDIT\tACTION\tOPERATOR\tON\tSTATUS\tREASON", rows)
	}
	if len(d.Deliveries) > 0 {
		fmt.Fprintln(p.W, "\ndeliveries:")
		rows := make([][]string, 0, len(d.Deliveries))
		for _, x := range d.Deliveries {
			sent := "-"
			if x.SentOn != nil {
				sent = utcText(*x.SentOn)
			}
			rows = append(rows, []string{x.DeliveryKey, x.Channel, x.Recipient, x.Status, sent})
		}
		p.table("DELIVERY KEY\tCHANNEL\tRECIPIENT\tSTATUS\tSENT", rows)
	}
	if d.Diagnostics != nil {
		fmt.Fprintf(p.W, "\ndiagnostics %s:\n", Clean(d.Diagnostics.BlobName))
		switch {
		case d.Diagnostics.Missing:
			fmt.Fprintln(p.W, "  (blob not found)")
		case len(d.Diagnostics.JSON) > 0:
			var v any
			_ = json.Unmarshal(d.Diagnostics.JSON, &v)
			b, _ := json.MarshalIndent(v, "  ", "  ")
			fmt.Fprintf(p.W, "  %s\n", b)
		default:
			fmt.Fprintf(p.W, "  %s\n", cleanText(d.Diagnostics.Text, true))
		}
	}
	for _, n := range d.Notes {
		fmt.Fprintln(p.W, "note: "+Clean(n))
	}
	return nil
}

// Explain renders an explanation (support.Explanation).
func (p *Printer) Explain(a Answer) error {
	x, ok, err := decodeAnswer[support.Explanation](p, a)
	if !ok {
		return err
	}
	fmt.Fprintf(p.W, "%s %s in %s (%s, local today %s), as of %s\n", Clean(x.Source.SourceType), Clean(x.Source.SourceGuid), Clean(x.BusinessUnit.ID),
		Clean(x.BusinessUnit.TimeZoneID), x.BusinessUnit.LocalToday, utcText(x.AsOf))
	for _, s := range x.Summary {
		fmt.Fprintln(p.W, "  "+Clean(s))
	}
	for _, s := range x.Settings {
		value := "-"
		if s.TriggerValue != nil {
			value = fmt.Sprint(s.TriggerValue)
		}
		fmt.Fprintf(p.W, "\n%s (%s, %s=%s, offsets %v at %s):\n", Clean(s.Name), activeText(s.IsActive), Clean(s.TriggerKey), Clean(value), s.OffsetsDays, orDash(s.SendLocalTime))
		if s.Why != "" {
			fmt.Fprintln(p.W, "  "+Clean(s.Why))
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
			p.table("LOCAL\tUTC\tOUTCOME\tREASON\tROW\tWHY", rows)
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

// Metrics renders the health figures (support.Metrics).
func (p *Printer) Metrics(a Answer) error {
	m, ok, err := decodeAnswer[support.Metrics](p, a)
	if !ok {
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
	rows = append(rows, []string{"held reservations", strconv.Itoa(m.ReservationsHeld)}, []string{"oldest held age", age(m.OldestHeldAgeSeconds)},
		[]string{"fees by status", strings.TrimSpace(byReason(m.FeesByStatus))})
	p.table("METRIC\tVALUE", rows)
	if len(m.Capped) > 0 {
		fmt.Fprintf(p.W, "at least (reached the cap of %d): %s\n", m.Cap, strings.Join(m.Capped, ", "))
	}
	return nil
}

func byReason(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", orDash(k), m[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// Acted renders a row action's result (support.ActResult).
func (p *Printer) Acted(a Answer) error {
	r, ok, err := decodeAnswer[support.ActResult](p, a)
	if !ok {
		return err
	}
	fmt.Fprintf(p.W, "%s: row %d is %s (version %d, audit %d)\n", Clean(r.Action), r.Row.ID, Clean(r.Row.Status), r.Row.Version, r.AuditID)
	if r.RetryRow != nil {
		fmt.Fprintf(p.W, "support-retry row %d: %s, due %s\n", r.RetryRow.ID, Clean(r.RetryRow.SchedulerKey), utcText(r.RetryRow.ScheduledOn))
	}
	if r.Note != "" {
		fmt.Fprintln(p.W, "note: "+Clean(r.Note))
	}
	return nil
}

// Released renders a paced release (support.ReleaseResult).
func (p *Printer) Released(a Answer) error {
	r, ok, err := decodeAnswer[support.ReleaseResult](p, a)
	if !ok {
		return err
	}
	fmt.Fprintf(p.W, "release %s: %d row(s) in %d batch(es) of %d, %d/min (one batch every %gs)\n", Clean(r.ID), r.Released, r.Batches, r.BatchSize, r.RatePerMinute, r.IntervalSeconds)
	if r.FirstDueOn != nil && r.LastDueOn != nil {
		fmt.Fprintf(p.W, "due from %s to %s\n", utcText(*r.FirstDueOn), utcText(*r.LastDueOn))
	}
	if len(r.Rows) > 0 {
		rows := make([][]string, 0, len(r.Rows))
		for _, x := range r.Rows {
			rows = append(rows, []string{strconv.FormatInt(x.ID, 10), utcText(x.DueOn), x.SchedulerKey})
		}
		p.table("ID\tDUE\tSCHEDULER KEY", rows)
	}
	if r.More {
		fmt.Fprintln(p.W, "more rows may match: run the release again")
	}
	return nil
}

// decodeAnswer reads a's JSON body as a T for a Printer method, unless p prints the API's
// JSON as it came (p.JSON), which it then does: ok false ends the method, with err when
// the body is not a T's JSON.
func decodeAnswer[T any](p *Printer, a Answer) (v T, ok bool, err error) {
	if p.JSON {
		p.raw(a.Body)
		return v, false, nil
	}
	err = json.Unmarshal(a.Body, &v)
	return v, err == nil, err
}
