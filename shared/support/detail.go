package support

import (
	"context"
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/logmask"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/trace"
)

// maxDeliveriesShown and maxAuditShown bound a row's detail.
const (
	maxDeliveriesShown = 200
	maxAuditShown      = 200
	maxAttemptsShown   = 500
)

// Detail is one row with everything support needs to see about it.
type Detail struct {
	Row Row `json:"row"`
	// Attempts are the row's AutomationJob trace rows, oldest first: every attempt, and every
	// support action.
	Attempts []Attempt `json:"attempts"`
	// Audit lists the support actions on the row, oldest first.
	Audit []Audit `json:"audit"`
	// Deliveries are the NotificationJob rows written when the row completed; recipients are
	// masked (personal data, docs/operations.md#personal-data).
	Deliveries []Delivery `json:"deliveries"`
	// Diagnostics is the content of the row's latest diagnostics blob (TraceBlobName).
	Diagnostics *Diagnostics `json:"diagnostics,omitempty"`
	// Notes say what could not be read (trace store unavailable, …).
	Notes []string `json:"notes,omitempty"`
}

// Attempt is one AutomationJob trace row.
type Attempt struct {
	Attempt       int       `json:"attempt"`
	Version       int64     `json:"version"`
	Outcome       string    `json:"outcome"`
	ReasonCode    string    `json:"reasonCode,omitempty"`
	ErrorCode     string    `json:"errorCode,omitempty"`
	Message       string    `json:"message,omitempty"`
	StartedOn     time.Time `json:"startedOn"`
	FinishedOn    time.Time `json:"finishedOn"`
	TraceBlobName string    `json:"traceBlobName,omitempty"`
}

// Delivery is one NotificationJob, recipient masked.
type Delivery struct {
	DeliveryKey       string `json:"deliveryKey"`
	Channel           string `json:"channel"`
	Recipient         string `json:"recipient"`
	Template          string `json:"template"`
	Status            string `json:"status"`
	AttemptCount      int    `json:"attemptCount"`
	ProviderReference string `json:"providerReference,omitempty"`
	// Test: a test send (docs/channels.md#test-send), not a real occurrence's delivery.
	Test bool `json:"test,omitempty"`
	// Decision is the recipient gate's decision when it held the delivery back
	// (docs/channels.md#recipient-preferences): "Skipped: <the preference, its source and
	// time>" or "Waiting for quiet hours to end at <local time> (<zone>)"; "" when the gate
	// let it pass (or it was not asked yet). Masked like LastError.
	Decision  string     `json:"decision,omitempty"`
	LastError string     `json:"lastError,omitempty"`
	CreatedOn time.Time  `json:"createdOn"`
	SentOn    *time.Time `json:"sentOn,omitempty"`
}

// Diagnostics is a diagnostics blob's content: JSON when the blob is JSON and was not cut,
// else Text. E-mail addresses and phone numbers are masked.
type Diagnostics struct {
	BlobName  string          `json:"blobName"`
	JSON      json.RawMessage `json:"json,omitempty"`
	Text      string          `json:"text,omitempty"`
	Truncated bool            `json:"truncated,omitempty"`
	Missing   bool            `json:"missing,omitempty"`
}

// Get returns the row named by ref (its Id or Guid) with its attempts, audit, deliveries
// and diagnostics. Errors: CodeNotFound (unknown or outside the scope), CodeMalformed (ref is
// neither an Id nor a Guid). A trace store failure is a note, not an error: the SQL facts
// still answer.
func (s *Service) Get(ctx context.Context, sc automation.Scope, ref string) (Detail, error) {
	row, err := s.lookup(ctx, sc, ref)
	if err != nil {
		return Detail{}, err
	}
	audit, err := s.store.SupportAuditList(ctx, []int64{row.ID}, maxAuditShown)
	if err != nil {
		return Detail{}, err
	}
	d := Detail{Row: rowView(row, audit), Attempts: []Attempt{}, Audit: make([]Audit, 0, len(audit)), Deliveries: []Delivery{}}
	for _, a := range audit {
		d.Audit = append(d.Audit, auditView(a))
	}
	jobs, err := s.store.SupportNotificationList(ctx, row.SchedulerKey, maxDeliveriesShown)
	if err != nil {
		return Detail{}, err
	}
	for _, j := range jobs {
		d.Deliveries = append(d.Deliveries, deliveryView(j))
	}
	if s.trace == nil {
		d.Notes = append(d.Notes, "no trace store is configured: attempts and diagnostics are not available")
		return d, nil
	}
	recs, err := s.trace.JobsByKey(ctx, row.SchedulerKey)
	if err != nil {
		s.log.WarnContext(ctx, "support: trace rows not read", "schedulerKey", row.SchedulerKey, "businessUnitId", row.BusinessUnitID, "step", "support-get", "error", err)
		d.Notes = append(d.Notes, "the trace store could not be read; attempts are missing")
	}
	if len(recs) > maxAttemptsShown {
		d.Notes = append(d.Notes, "only the first attempts are shown")
		recs = recs[:maxAttemptsShown]
	}
	for _, r := range recs {
		d.Attempts = append(d.Attempts, Attempt{Attempt: r.Attempt, Version: r.Version, Outcome: string(r.Outcome),
			ReasonCode: r.ReasonCode, ErrorCode: r.ErrorCode, Message: logmask.String(r.Message), StartedOn: r.StartedOn,
			FinishedOn: r.FinishedOn, TraceBlobName: r.TraceBlobName})
	}
	if row.TraceBlobName != "" {
		d.Diagnostics = s.diagnostics(ctx, row.TraceBlobName)
	}
	return d, nil
}

func deliveryView(j store.NotificationJob) Delivery {
	return Delivery{DeliveryKey: j.DeliveryKey, Channel: j.Channel, Recipient: logmask.String(j.Recipient), Template: j.Template,
		Status: string(j.Status), AttemptCount: j.AttemptCount, ProviderReference: j.ProviderReference, Test: delivery.IsTestSend(j.SchedulerKey),
		LastError: logmask.String(j.LastError), CreatedOn: j.CreatedOn, SentOn: j.SentOn, Decision: gateDecision(j)}
}

// gateDecision is the recipient gate's decision on j as the delivery views show it (the same
// note explain gives, deliveryNote), masked; "" when the gate did not hold it back.
func gateDecision(j store.NotificationJob) string {
	if n, ok := deliveryNote(j); ok {
		return logmask.String(n.Note)
	}
	return ""
}

// diagnostics reads a blob, bounded by MaxDiagnosticsBytes, with personal data masked.
func (s *Service) diagnostics(ctx context.Context, name string) *Diagnostics {
	d := &Diagnostics{BlobName: name}
	b, err := s.trace.GetBlob(ctx, name)
	switch {
	case errors.Is(err, trace.ErrBlobNotFound):
		d.Missing = true
		return d
	case err != nil:
		s.log.WarnContext(ctx, "support: diagnostics blob not read", "blob", name, "step", "support-get", "error", err)
		d.Missing = true
		return d
	}
	if len(b) > s.cfg.MaxDiagnosticsBytes {
		b = b[:s.cfg.MaxDiagnosticsBytes]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
		d.Truncated = true
	}
	masked := logmask.String(string(b))
	if !d.Truncated && json.Valid([]byte(masked)) {
		d.JSON = json.RawMessage(masked)
	} else {
		d.Text = masked
	}
	return d
}
