package support

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/logmask"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/trace"
)

// ReleaseFilter selects the rows on support hold a paced release clears. At least one field
// must be set: a release with no filter would touch every held row and is refused.
type ReleaseFilter struct {
	BusinessUnitID    string                `json:"businessUnitId,omitempty"`
	SourceType        string                `json:"sourceType,omitempty"`
	SourceGuid        string                `json:"sourceGuid,omitempty"`
	Status            automation.Status     `json:"status,omitempty"`
	FailureReasonCode automation.ReasonCode `json:"failureReasonCode,omitempty"`
	ScheduledFrom     *time.Time            `json:"scheduledFrom,omitempty"`
	ScheduledTo       *time.Time            `json:"scheduledTo,omitempty"`
}

func (f ReleaseFilter) empty() bool {
	return f.BusinessUnitID == "" && f.SourceType == "" && f.SourceGuid == "" && f.Status == "" &&
		f.FailureReasonCode == "" && f.ScheduledFrom == nil && f.ScheduledTo == nil
}

// ReleaseRequest is a paced release of the rows on hold matching Filter: batches of
// BatchSize rows become due BatchSize/RatePerMinute minutes apart, at most MaxRows rows.
// Zero RatePerMinute, BatchSize and MaxRows take the configured defaults.
type ReleaseRequest struct {
	Filter        ReleaseFilter
	RatePerMinute int
	BatchSize     int
	MaxRows       int
	Operator      string
	Reason        string
	// ID names the release in the audit (BatchId); "" derives one from who, when and what.
	ID string
}

// ReleaseResult says what a paced release did.
type ReleaseResult struct {
	ID            string `json:"id"`
	Released      int    `json:"released"`
	Batches       int    `json:"batches"`
	RatePerMinute int    `json:"ratePerMinute"`
	BatchSize     int    `json:"batchSize"`
	// IntervalSeconds is the spacing of the batches' due instants.
	IntervalSeconds float64    `json:"intervalSeconds"`
	FirstDueOn      *time.Time `json:"firstDueOn,omitempty"`
	LastDueOn       *time.Time `json:"lastDueOn,omitempty"`
	// More is true when the release stopped at MaxRows: more rows may match; run it again.
	More bool `json:"more"`
	// Rows lists the released rows' ids and keys (at most the first 100).
	Rows []ReleasedRow `json:"rows"`
}

// ReleasedRow names one released row and when it becomes due.
type ReleasedRow struct {
	ID           int64     `json:"id"`
	SchedulerKey string    `json:"schedulerKey"`
	DueOn        time.Time `json:"dueOn"`
}

const maxReleasedRowsShown = 100

// validate checks the request and fills its defaults. Errors are CodeInvalidInput naming the
// field (nothing is changed).
func (s *Service) validateRelease(req *ReleaseRequest) error {
	var errs []error
	if req.Filter.empty() {
		errs = append(errs, automation.Invalid("filter", "a release needs at least one filter (businessUnitId, sourceType+sourceGuid, status, failureReasonCode, scheduledFrom, scheduledTo); it would otherwise release every held row"))
	}
	f := req.Filter
	if (f.SourceType == "") != (f.SourceGuid == "") {
		errs = append(errs, automation.Invalid("filter.sourceGuid", "sourceType and sourceGuid go together"))
	}
	if f.Status != "" && f.Status != automation.StatusFailed && f.Status != automation.StatusPending {
		errs = append(errs, automation.Invalid("filter.status", "held rows to release are Failed or Pending, not %q", f.Status))
	}
	if f.FailureReasonCode != "" && !f.FailureReasonCode.IsFailureReason() {
		errs = append(errs, automation.Invalid("filter.failureReasonCode", "must be one of %v (the codes a failed attempt records), got %q",
			automation.FailureReasonCodes, f.FailureReasonCode))
	}
	if f.ScheduledFrom != nil && f.ScheduledTo != nil && !f.ScheduledFrom.Before(*f.ScheduledTo) {
		errs = append(errs, automation.Invalid("filter.scheduledTo", "must be after scheduledFrom"))
	}
	if req.RatePerMinute == 0 {
		req.RatePerMinute = s.cfg.DefaultReleasePerMinute
	}
	if req.RatePerMinute < 1 || req.RatePerMinute > s.cfg.MaxReleasePerMinute {
		errs = append(errs, automation.Invalid("ratePerMinute", "must be 1 to %d rows per minute (the configured maximum), got %d", s.cfg.MaxReleasePerMinute, req.RatePerMinute))
	}
	if req.BatchSize == 0 {
		req.BatchSize = min(s.cfg.DefaultReleaseBatch, max(req.RatePerMinute, 1))
	}
	if req.BatchSize < 1 || req.BatchSize > s.cfg.MaxReleaseBatch {
		errs = append(errs, automation.Invalid("batchSize", "must be 1 to %d, got %d", s.cfg.MaxReleaseBatch, req.BatchSize))
	}
	if req.MaxRows == 0 {
		req.MaxRows = s.cfg.MaxReleaseRows
	}
	if req.MaxRows < 1 || req.MaxRows > s.cfg.MaxReleaseRows {
		errs = append(errs, automation.Invalid("maxRows", "must be 1 to %d, got %d", s.cfg.MaxReleaseRows, req.MaxRows))
	}
	return automation.InvalidFields(errs...)
}

// interval is the spacing of batches for a rate: BatchSize rows per BatchSize/rate minutes.
func interval(batch, ratePerMinute int) time.Duration {
	return time.Duration(batch) * time.Minute / time.Duration(ratePerMinute)
}

// ReleaseMany releases the rows on support hold matching req.Filter that the scope sees, in
// bounded batches (one transaction each) whose due instants are spaced so that at most
// RatePerMinute rows per minute become due (docs/architecture.md#support-actions): batch k is due at
// max(now, the release pace) + k·BatchSize/RatePerMinute minutes. The pace is shared by every
// release, so two releases one after the other (or at once) never add up past their rates:
// the second starts where the first ends. Nothing waits in memory: the rows are released in
// SQL and the due-work poller picks each batch at its instant. Errors: CodeInvalidInput (no
// filter, a rate above the configured maximum, bad sizes; nothing changes), CodeNotFound (a
// business unit outside the scope).
func (s *Service) ReleaseMany(ctx context.Context, sc automation.Scope, req ReleaseRequest) (ReleaseResult, error) {
	reason, auditErr := checkAudit(req.Operator, req.Reason)
	if err := automation.InvalidFields(auditErr, s.validateRelease(&req)); err != nil {
		return ReleaseResult{}, err
	}
	if req.Filter.BusinessUnitID != "" && (!sc.Allows(req.Filter.BusinessUnitID)) {
		return ReleaseResult{}, notFound("business unit " + req.Filter.BusinessUnitID)
	}
	now := utc(s.clock.Now())
	if req.ID == "" {
		sum := sha256.Sum256([]byte(req.Operator + "\x00" + now.Format(time.RFC3339Nano) + "\x00" + filterText(req.Filter)))
		req.ID = "rel-" + hex.EncodeToString(sum[:8])
	}
	f := req.Filter
	sf := store.SupportReleaseFilter{SourceEntityType: f.SourceType, SourceEntityGuid: f.SourceGuid, BusinessUnitID: f.BusinessUnitID,
		Status: f.Status, FailureReasonCode: f.FailureReasonCode, ScheduledFrom: f.ScheduledFrom, ScheduledTo: f.ScheduledTo, Scope: sc}
	every := interval(req.BatchSize, req.RatePerMinute)
	res := ReleaseResult{ID: req.ID, RatePerMinute: req.RatePerMinute, BatchSize: req.BatchSize, IntervalSeconds: every.Seconds(), Rows: []ReleasedRow{}}
	var after int64
	for res.Released < req.MaxRows {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		limit := min(req.BatchSize, req.MaxRows-res.Released)
		b, err := s.store.SupportSchedulerReleaseBatch(ctx, store.SupportReleaseBatchParams{Filter: sf, AfterID: after, Limit: limit,
			Now: now, Interval: every, Operator: req.Operator, Reason: reason, BatchID: req.ID})
		if err != nil {
			return res, err
		}
		if len(b.Rows) == 0 {
			break
		}
		due := b.DueOn
		if res.FirstDueOn == nil {
			res.FirstDueOn = &due
		}
		res.LastDueOn = &due
		res.Batches++
		res.Released += len(b.Rows)
		recs := make([]trace.JobRecord, 0, len(b.Rows))
		for _, r := range b.Rows {
			if len(res.Rows) < maxReleasedRowsShown {
				res.Rows = append(res.Rows, ReleasedRow{ID: r.ID, SchedulerKey: r.SchedulerKey, DueOn: due})
			}
			rec := s.traceRecord(r, store.SupportRelease, 0, reason, now, "")
			rec.Message = automation.Clip("support Release (paced release "+req.ID+", due "+stamp(due)+"): "+logmask.String(reason), 256)
			recs = append(recs, rec)
		}
		s.writeTrace(ctx, recs)
		after = b.Rows[len(b.Rows)-1].ID
		if len(b.Rows) < limit {
			break
		}
	}
	res.More = res.Released == req.MaxRows
	s.log.InfoContext(ctx, "support paced release", "step", "support-release-many", "releaseId", req.ID,
		"released", res.Released, "batches", res.Batches, "ratePerMinute", req.RatePerMinute)
	return res, nil
}

func filterText(f ReleaseFilter) string {
	t := func(p *time.Time) string {
		if p == nil {
			return ""
		}
		return p.UTC().Format(time.RFC3339Nano)
	}
	return f.BusinessUnitID + "|" + f.SourceType + "|" + f.SourceGuid + "|" + string(f.Status) + "|" +
		string(f.FailureReasonCode) + "|" + t(f.ScheduledFrom) + "|" + t(f.ScheduledTo)
}
