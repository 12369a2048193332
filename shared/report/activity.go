package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// ActivityReportType is the built-in report: the automation activity of the subscription's
// business unit for the run's period, from our own SQL data.
const ActivityReportType = "automation-activity"

// ActivityStore is what the activity renderer reads.
type ActivityStore interface {
	ReportActivity(ctx context.Context, p store.ReportActivityParams) ([]store.ReportActivityRow, error)
	ReminderSettingGet(ctx context.Context, guid string) (store.ReminderSettingRecord, error)
	ReportSubscriptionGet(ctx context.Context, guid string) (store.ReportSubscriptionRecord, error)
}

// maxActivityGroups bounds the rows of one activity report.
const maxActivityGroups = store.MaxBatch

// ActivityRenderer renders the automation-activity report as CSV (RFC 4180, header row):
//
//	periodStartUtc,periodEndUtc,businessUnitId,automationType,settingGuid,settingName,deliveriesSent,deliveriesFailed,runsFailed,runsOnHold
//
// one row per reminder setting or report subscription with activity in the period: deliveries
// sent and failed (NotificationJob finished in the period), scheduler rows that ended Failed
// or on support hold. Only the subscription's own business unit is ever read. Text cells
// that a spreadsheet would evaluate (leading = + - @) start with an apostrophe.
type ActivityRenderer struct {
	Store ActivityStore
}

var _ Renderer = (*ActivityRenderer)(nil)

// Formats implements Renderer.
func (a *ActivityRenderer) Formats() []string { return []string{"csv"} }

// ActivityHeader is the CSV header row.
var ActivityHeader = []string{"periodStartUtc", "periodEndUtc", "businessUnitId", "automationType", "settingGuid", "settingName",
	"deliveriesSent", "deliveriesFailed", "runsFailed", "runsOnHold"}

// Render implements Renderer.
func (a *ActivityRenderer) Render(ctx context.Context, req RenderRequest) (File, error) {
	rows, err := a.Store.ReportActivity(ctx, store.ReportActivityParams{BusinessUnitID: req.BusinessUnitID,
		From: req.PeriodStart, To: req.PeriodEnd, Limit: maxActivityGroups})
	if err != nil {
		return File{}, err
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(ActivityHeader)
	start, end := req.PeriodStart.UTC().Format(time.RFC3339), req.PeriodEnd.UTC().Format(time.RFC3339)
	names := map[string]string{}
	for _, r := range rows {
		name, ok := names[r.SettingGuid]
		if !ok {
			name = a.name(ctx, r)
			names[r.SettingGuid] = name
		}
		_ = w.Write([]string{start, end, cell(r.BusinessUnitID), cell(string(r.AutomationType)), cell(r.SettingGuid), cell(name),
			strconv.Itoa(r.DeliveriesSent), strconv.Itoa(r.DeliveriesFailed), strconv.Itoa(r.RunsFailed), strconv.Itoa(r.RunsOnHold)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return File{}, err
	}
	return File{Body: buf.Bytes(), ContentType: "text/csv; charset=utf-8", Extension: "csv"}, nil
}

// cell neutralises a text cell a spreadsheet would run as a formula (CSV injection,
// CWE-1236): one starting with = + - @, a tab or a carriage return gets a leading
// apostrophe, which spreadsheets show as text and do not display.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// name returns the display name of a reminder setting or report subscription ("" when it
// is gone or has none).
func (a *ActivityRenderer) name(ctx context.Context, r store.ReportActivityRow) string {
	var body string
	switch r.AutomationType {
	case automation.TypeReminder:
		rec, err := a.Store.ReminderSettingGet(ctx, r.SettingGuid)
		if err != nil {
			return ""
		}
		body = rec.Body
	case automation.TypeReportSubscription:
		rec, err := a.Store.ReportSubscriptionGet(ctx, r.SettingGuid)
		if err != nil {
			return ""
		}
		body = rec.Body
	default:
		return ""
	}
	var v struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil && !errors.Is(err, store.ErrNotFound) {
		return ""
	}
	return v.Name
}
