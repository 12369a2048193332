package report

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/metricscount"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
)

// ErrOwnershipConflict: the old scheduler owns the run's key; the row goes on support hold
// and no delivery artifact is created.
// ReasonOwnershipConflict is the FailureReasonCode of a run held because another owner
// holds its ReportRunOwnership (docs/seeds.md#seed-004: conflict → support hold, never a second delivery).
const ReasonOwnershipConflict automation.ReasonCode = "OwnershipConflict"

var ErrOwnershipConflict = errors.New("report run ownership conflict: the old scheduler owns this run")

// Handler executes due report rows (stage ②). For each run it:
//
//  1. reloads the subscription (deleted → Deactivated SubscriptionDeleted, paused →
//     SubscriptionPaused; a scheduled row that is no longer an occurrence → Superseded);
//  2. for a scheduled run, ensures the next scheduled run at once, so a run that fails never
//     stalls the chain (it is ensured again with the completion, as a follow-up);
//  3. applies the rollout mode: a run the old scheduler keeps is Deactivated ShadowOnly and
//     never acquires ownership;
//  4. acquires ReportRunOwnership of the run's ownership key as AutomationScheduler: a
//     conflict (the old scheduler owns it) is a permanent failure - support hold, no
//     delivery; a retry that finds its own DeliveryCreated row reuses the recorded
//     coordinates instead of rendering again;
//  5. renders the report (template, recipients and channels read now), stores the file in
//     Blob under reports/{StorageRunKeyHash}/{sha256 prefix}/, records DeliveryCreated with
//     the coordinates, and returns the delivery requests, written with the completion in one
//     transaction.
//
// DeliveryCreated is recorded before the completion commits: the coordinates are
// deterministic, so a retry can only write the same delivery keys again (NotificationJob and
// outbox inserts ignore existing keys), while the reverse order could leave a delivered run
// Owned and hand it back to the old scheduler on a rollback.
type Handler struct {
	Service *Service
	// Runs, when set, counts the runs for the console's overview (metricscount.FlowReport,
	// persisted by the metrics sampler), labelled by report type: delivered once per run
	// (when this execution recorded DeliveryCreated: a retry that reuses the coordinates is
	// not counted again), skipped for a deactivation, failed for a permanent error (the row
	// goes on support hold). A transient error is not counted: the run is retried. A skip or
	// failure whose completion then loses its lease runs again and counts again (rare: the
	// lease outlived the execution).
	Runs *metricscount.Counts
}

var _ scheduler.Handler = (*Handler)(nil)

// Execute implements scheduler.Handler.
func (h *Handler) Execute(ctx context.Context, row automation.SchedulerRow, now time.Time) (scheduler.Outcome, error) {
	var ran runCount
	out, err := h.execute(ctx, row, now, &ran)
	switch {
	case h.Runs == nil:
	case err != nil && automation.IsPermanent(err):
		h.Runs.Add(row.BusinessUnitID, ran.reportType, metricscount.OutcomeFailed, 1)
	case err == nil && out.Deactivate != "":
		h.Runs.Add(row.BusinessUnitID, ran.reportType, metricscount.OutcomeSkipped, 1)
	case err == nil && ran.delivered:
		h.Runs.Add(row.BusinessUnitID, ran.reportType, metricscount.OutcomeDelivered, 1)
	}
	return out, err
}

// runCount is what Execute counts of one execution: the report type (once the
// subscription is read; "" before) and whether it recorded DeliveryCreated.
type runCount struct {
	reportType string
	delivered  bool
}

func (h *Handler) execute(ctx context.Context, row automation.SchedulerRow, now time.Time, ran *runCount) (scheduler.Outcome, error) {
	s := h.Service
	st := s.c.Store
	deact := func(r automation.ReasonCode, follow []automation.Candidate) (scheduler.Outcome, error) {
		return scheduler.Outcome{Deactivate: r, FollowUps: follow}, nil
	}
	run, err := st.ReportRunGetByKey(ctx, row.SchedulerKey)
	if errors.Is(err, store.ErrNotFound) {
		return scheduler.Outcome{}, automation.Permanent(fmt.Errorf("report run %s is not registered", row.SchedulerKey))
	}
	if err != nil {
		return scheduler.Outcome{}, err
	}
	rec, err := st.ReportSubscriptionGet(ctx, run.SubscriptionGuid)
	if errors.Is(err, store.ErrNotFound) {
		return deact(ReasonSubscriptionDeleted, nil)
	}
	if err != nil {
		return scheduler.Outcome{}, err
	}
	sub, err := fromRecord(rec)
	if err != nil {
		return scheduler.Outcome{}, automation.Permanent(err)
	}
	ran.reportType = sub.ReportType
	switch sub.Status {
	case store.ReportSubscriptionDeleted:
		return deact(ReasonSubscriptionDeleted, nil)
	case store.ReportSubscriptionPaused:
		return deact(ReasonSubscriptionPaused, nil)
	}
	bu, err := st.BusinessUnitGet(ctx, sub.BusinessUnitID)
	if err != nil {
		return scheduler.Outcome{}, fmt.Errorf("business unit %s: %w", sub.BusinessUnitID, err)
	}
	sched, err := Compile(sub.Recurrence, bu.TimeZoneID)
	if err != nil {
		return scheduler.Outcome{}, automation.Permanent(fmt.Errorf("stored subscription %s: %w", sub.Guid, err))
	}

	var follow []automation.Candidate
	if run.RunKind == store.ReportRunScheduled {
		base := row.ScheduledOn
		if now.After(base) {
			base = now
		}
		if occ, ok := sched.Next(base); ok {
			c, err := s.scheduledCandidate(ctx, sub, sched, occ)
			if err != nil {
				return scheduler.Outcome{}, err
			}
			if _, err := st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: now, Candidates: []automation.Candidate{c}}); err != nil {
				return scheduler.Outcome{}, err
			}
			follow = []automation.Candidate{c}
		}
		d, derr := localtime.ParseDate(row.ScheduledLocalDate)
		t, terr := localtime.ParseTimeOfDay(row.ScheduledLocalTime)
		contained := derr == nil && terr == nil && row.TimeZoneID == bu.TimeZoneID && sched.Contains(d, t)
		if err := sched.Err(); err != nil {
			return scheduler.Outcome{}, automation.Permanent(fmt.Errorf("stored subscription %s: %w", sub.Guid, err))
		}
		if !contained {
			return deact(automation.ReasonSuperseded, follow)
		}
	}

	ownKind := run.RunKind
	if run.OwnershipKey != run.SchedulerKey {
		orig, err := st.ReportRunGetByKey(ctx, run.OwnershipKey)
		if err != nil {
			return scheduler.Outcome{}, automation.Permanent(fmt.Errorf("retried run %s: %w", run.OwnershipKey, err))
		}
		ownKind = orig.RunKind
	}
	mode, err := s.Mode(ctx, sub)
	if err != nil {
		return scheduler.Outcome{}, err
	}
	if !mode.Mode.AutomationRuns(ownKind) {
		return deact(ReasonShadowOnly, follow)
	}

	acq, err := st.ReportOwnershipAcquire(ctx, store.ReportOwnershipAcquireParams{SchedulerKey: run.OwnershipKey,
		SubscriptionGuid: sub.Guid, RunKind: ownKind, Owner: store.OwnerAutomationScheduler, Now: now})
	if err != nil {
		return scheduler.Outcome{}, err
	}
	own := acq.Ownership
	if acq.Outcome == store.OwnershipConflict {
		s.c.Log.WarnContext(ctx, "report run ownership conflict: put on support hold", "schedulerKey", row.SchedulerKey,
			"ownershipKey", run.OwnershipKey, "owner", string(own.OwnerType), "ownershipStatus", string(own.Status), "businessUnitId", row.BusinessUnitID,
			"step", "execute", "errorCode", string(ReasonOwnershipConflict))
		return scheduler.Outcome{}, automation.PermanentReason(ReasonOwnershipConflict,
			fmt.Errorf("%w (%s %s, owner version %d)", ErrOwnershipConflict, run.OwnershipKey, own.Status, own.OwnerVersion))
	}
	if own.Status == store.OwnershipDeliveryCreated {
		// A retry of a run whose delivery was recorded: the same requests, nothing rendered.
		c, err := decodeCoordinates(own.CoordinatesJSON)
		if err != nil {
			return scheduler.Outcome{}, automation.Permanent(fmt.Errorf("coordinates of %s: %w", run.OwnershipKey, err))
		}
		return complete(c, follow)
	}

	rend, ok := s.c.Renderers.Lookup(sub.ReportType)
	if !ok {
		return scheduler.Outcome{}, automation.Permanent(fmt.Errorf("unknown report type %q", sub.ReportType))
	}
	file, err := rend.Render(ctx, RenderRequest{SubscriptionGuid: sub.Guid, SubscriptionName: sub.Name, BusinessUnitID: sub.BusinessUnitID,
		ReportType: sub.ReportType, Format: sub.Format, Parameters: sub.Parameters, SchedulerKey: row.SchedulerKey,
		RunKeyHash: run.RunKeyHash, PeriodStart: run.PeriodStart, PeriodEnd: run.PeriodEnd, TimeZoneID: bu.TimeZoneID})
	if err != nil {
		return scheduler.Outcome{}, fmt.Errorf("render %s: %w", sub.ReportType, err)
	}
	sum := sha256.Sum256(file.Body)
	endLocal := localtime.DateOf(run.PeriodEnd.Add(-time.Second), sched.Location())
	att := Attachment{FileName: fmt.Sprintf("%s-%s.%s", sub.ReportType, endLocal, file.Extension), ContentType: file.ContentType,
		SizeBytes: len(file.Body), SHA256: hex.EncodeToString(sum[:])}
	// The content's hash in the name: an execution that overlaps a later one of the same run
	// (it stalled past its lease) can never overwrite the file the coordinates record.
	att.BlobName = "reports/" + run.RunKeyHash + "/" + att.SHA256[:16] + "/" + att.FileName
	if err := s.c.Blobs.PutBlob(ctx, att.BlobName, file.Body); err != nil {
		return scheduler.Outcome{}, fmt.Errorf("store report file: %w", err)
	}
	p := Payload{SubscriptionGuid: sub.Guid, SubscriptionName: sub.Name, ReportType: sub.ReportType, RunKeyHash: run.RunKeyHash,
		PeriodStartUTC: run.PeriodStart.UTC().Format(time.RFC3339), PeriodEndUTC: run.PeriodEnd.UTC().Format(time.RFC3339),
		ScheduledOn: row.ScheduledOn.UTC().Format(time.RFC3339), LocalTime: row.ScheduledOn.In(sched.Location()).Format(LocalTimeLayout),
		TimeZoneID: bu.TimeZoneID, Format: sub.Format, Delivery: sub.Delivery}
	if sub.Delivery == DeliverAttachment {
		a := att
		p.Attachment = &a
	} else {
		p.Link = "/api/report-runs/" + run.RunKeyHash + "/file"
	}
	c, err := buildDeliveries(run.OwnershipKey, sub.BusinessUnitID, sub.Template, sub.Channels, sub.Recipients, p, att)
	if err != nil {
		return scheduler.Outcome{}, automation.Permanent(err)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return scheduler.Outcome{}, err
	}
	if _, err := st.ReportOwnershipMarkDeliveryCreated(ctx, store.ReportOwnershipFenceParams{SchedulerKey: run.OwnershipKey,
		Owner: store.OwnerAutomationScheduler, OwnerVersion: own.OwnerVersion, CoordinatesJSON: string(raw), Now: now}); err != nil {
		// Released (rollback) or taken over meanwhile: create nothing; the next attempt
		// revalidates the mode and the ownership.
		return scheduler.Outcome{}, fmt.Errorf("record delivery of %s: %w", run.OwnershipKey, err)
	}
	ran.delivered = true
	return complete(c, follow)
}

// complete turns coordinates into the outcome written with the completion.
func complete(c Coordinates, follow []automation.Candidate) (scheduler.Outcome, error) {
	jobs, msgs, err := c.rows()
	if err != nil {
		return scheduler.Outcome{}, automation.Permanent(err)
	}
	summary, _ := json.Marshal(map[string]any{"runKeyHash": c.RunKeyHash, "blobName": c.File.BlobName, "deliveryKeys": c.DeliveryKeys, "queue": c.Queue})
	return scheduler.Outcome{Deliveries: jobs, Outbox: msgs, FollowUps: follow, DispatchResultJSON: string(summary)}, nil
}
