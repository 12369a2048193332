package sim

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the read-only view of the run's database

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/budget/billingsim"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/acssim"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/replay"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/trace"
)

// Invariant names (docs/simulation.md). A later capability adds its own here and checks
// them in final (and, when cheap, in quiescent).
const (
	InvTerminal       = "due-rows-terminal"      // every due row: completed, deactivated with a reason, on hold with a reason or cancelled
	InvDeliveryFinal  = "deliveries-terminal"    // every delivery: sent, failed with an error, or UNKNOWN in the resolution queue
	InvOnce           = "delivered-at-most-once" // no delivery key takes effect twice
	InvRecorded       = "effects-recorded"       // a sent job took effect once; an effect on a non-idempotent channel is Sent or UNKNOWN
	InvNeverEarly     = "never-early"            // no reminder takes effect before its scheduled instant
	InvLocalTime      = "local-time"             // a date-based row's instant is its local date and time in its zone (oracle rule)
	InvCompletedOnce  = "completed-once"         // a row is completed by one attempt (trace)
	InvProjection     = "projection-recomputed"  // the delivery projection equals the NotificationJob table
	InvOutboxDrained  = "outbox-drained"         // nothing left unpublished
	InvEagerLost      = "eager-lost-published"   // every row whose eager publish was lost was published later (the timer relay)
	InvOracleDue      = "oracle-due"             // what the model says was due was delivered, at the model's instant
	InvOracleNotDue   = "oracle-not-due"         // what the model says was never due never took effect
	InvThresholdFired = "threshold-fired-once"   // a reached level fired (once); a level never reached never fired
	InvGatewayNotify  = "gateway-notified-once"  // each accepted NOTIFICATION event made one delivery
	InvSourceIDDedupe = "dedupe-per-source-id"   // the same id from two sources is two events: one delivery each
	InvFencing        = "stale-token-fenced"     // a write with an expired claim\'s Version never overwrites a live claim
	// InvWebhookOnce: at the webhook's receiver (which applies each Idempotency-Key once) a
	// delivery key was applied at most once, so every attempt carried one key; and every
	// webhook delivery recorded Sent was received and applied (webhook.go).
	InvWebhookOnce = "webhook-received-once"
	// InvSMSOnce: the simulated ACS (which sends each repeatabilityRequestId once) sent each
	// sms delivery at most once, and every sms delivery recorded Sent was sent (webhook.go).
	InvSMSOnce = "sms-sent-once"
)

// The attribute engine's invariants (loyalty.go).
const (
	InvAttrCounters = "attribute-counters"       // counters, flags, streaks and the hot total equal the model of the accepted events
	InvAttrTriggers = "attribute-triggered-once" // one trigger per crossing, as the model crosses
)

// The campaigns' invariants (campaigns.go).
const (
	InvCampaignExecOnce   = "campaign-execution-once" // one execution per campaign, recipient and accepted source event
	InvCampaignEffectOnce = "campaign-effect-once"    // no action effect twice except through a recorded UNKNOWN; SUCCEEDED applied once
	InvCampaignTerminal   = "campaign-terminal"       // every command ends terminal
	InvCampaignChain      = "campaign-chain-no-skip"  // a chain's steps run in order, a conditional step only after its condition held
)

// The budgets' invariants (budgets.go).
const (
	InvOrderChargedOnce  = "order-charged-once"  // no order, and no command across its attempts, charged twice at the billing server
	InvBudgetNotExceeded = "budget-not-exceeded" // confirmed plus reserved spend, and the billing server's charges, within maxCost
	InvFeeLedger         = "fee-ledger-agrees"   // after the drain: every fee settled; the billing ledger, the transfers and the budget's cost agree
	InvFeeNotHeld        = "fee-not-held"        // after the drain no reservation stays HELD
	InvFeeBeforeAction   = "fee-before-action"   // an action that took effect (or SUCCEEDED) had its fee confirmed
	InvStopDuringCharge  = "stop-during-charge"  // a campaign stopped during a command's charge: that action never reaches the provider
)

// The dead-letter operator actions' invariants (deadletters.go).
const (
	// InvDLRequeued: a requeued dead letter leaves the list and its message is handled once:
	// it takes effect (its cause was fixed) or is dead-lettered again (it was not), never
	// both, never neither; a message last requeued after the fix took effect by the end.
	InvDLRequeued = "dead-letter-requeued-once"
	// InvDLDiscarded: a discarded dead letter leaves the list, and a message last discarded
	// never takes effect.
	InvDLDiscarded = "dead-letter-discarded-never"
	// InvDLAudit: every audit row matches what the bus did (one action, the same, per ETag)
	// and every action the bus did has its audit row; a refused or paced action leaves no
	// row; a repeat is a replay, the other action 412, neither done again.
	InvDLAudit = "dead-letter-audit-matches-bus"
	// InvDLNo409: an action that died between its audit row and the bus call is answered 409
	// while it may still be done, and is taken over after deadletter.AbandonedAfter: no dead
	// letter answered 409 stays undone.
	InvDLNo409 = "dead-letter-no-409-for-good"
)

// Violation is one broken invariant.
type Violation struct {
	Invariant string
	Detail    string
}

func (v Violation) String() string { return v.Invariant + ": " + v.Detail }

// ViolationError carries the violations a check found.
type ViolationError struct{ Violations []Violation }

func (e *ViolationError) Error() string {
	var b strings.Builder
	for i, v := range e.Violations {
		if i == 5 {
			fmt.Fprintf(&b, "\n  … and %d more", len(e.Violations)-5)
			break
		}
		if i > 0 {
			b.WriteString("\n  ")
		}
		b.WriteString(v.String())
	}
	return b.String()
}

// effect is one delivery that reached its receiver (a "delivery" output line).
type effect struct {
	at, scheduledOn       time.Time
	schedulerKey, channel string
}

// lineSink reads the replay's output lines as they are written: the deliveries that took
// effect, by delivery key (the receivers' side: the log sink, the webhook endpoint).
type lineSink struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	effects map[string][]effect
	lines   int
	// budgetWaits: the campaign commands (recipient and action index) recorded WAITING_BUDGET
	// (refused for budget) at least once.
	budgetWaits map[string]bool
}

func (s *lineSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	for {
		i := bytes.IndexByte(s.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		line := append([]byte(nil), s.buf.Next(i+1)...)
		s.lines++
		var l struct {
			Kind, At, SchedulerKey, ScheduledOn, Channel, Recipient, Status string
			RecipientID                                                     string
			ActionIndex                                                     int
		}
		if json.Unmarshal(line, &l) != nil || l.Kind != "delivery" {
			if l.Kind == "action" && l.Status == "WAITING_BUDGET" {
				if s.budgetWaits == nil {
					s.budgetWaits = map[string]bool{}
				}
				s.budgetWaits[fmt.Sprintf("%s/%d", l.RecipientID, l.ActionIndex)] = true
			}
			continue
		}
		e := effect{schedulerKey: l.SchedulerKey, channel: l.Channel}
		e.at, _ = time.Parse(time.RFC3339, l.At)
		if l.ScheduledOn != "" {
			e.scheduledOn, _ = time.Parse(time.RFC3339, l.ScheduledOn)
		}
		k := delivery.Key(l.SchedulerKey, l.Channel, l.Recipient)
		s.effects[k] = append(s.effects[k], e)
	}
	return len(p), nil
}

// checker evaluates the invariants on the run's database, trace and output.
type checker struct {
	w       *Workload
	dbPath  string
	db      *sql.DB
	sink    *lineSink
	trace   func() trace.Reader
	checked map[string]int // assertions evaluated, by invariant
	// triggers: the attribute engine's trigger events the relay published, by id;
	// reordered: something may have reordered tracking messages (held, crashed, restarted).
	triggers  map[string]attribute.TriggerEvent
	reordered bool
	// eagerLost: outbox MessageIds unpublished when an eager publish was lost (bounded).
	eagerLost map[string]bool
	// attributes: the live runtime's attribute store (nil before it starts).
	attributes func() store.AttributeStore
	// providers: the simulated action providers, by name (campaigns.go).
	providers map[string]*providersim.Server
	// billing: the simulated billing server (budgets.go); nil without a budget.
	billing *billingsim.Server
	// stoppedOrders: the billing orders during whose call the campaign was stopped
	// (faults.go, StopCharge).
	stoppedOrders []string
	// webhooks: the webhook receiver's receipts so far (nil before the run starts).
	webhooks func() []replay.WebhookReceipt
	sms      func() []acssim.Request
	// prefErr: the preference setup failed (preferences.go).
	prefErr error
	// lateOptOut: the instant (UTC, the run's Clock) each number of the late set opted out
	// in the middle of the run (LateOptOut; preferences.go).
	lateOptOut map[string]time.Time
	// lateCrashed: the sms deliveries whose first claim, at or after their number's late
	// opt-out, died before its gate (LateOptOut): each must end Skipped, never sent.
	lateCrashed map[string]bool
	// dl: the dead-letter operator's record (deadletters.go).
	dl *dlState
	// noChannelFaults: channel fault windows are off, so every due delivery must be sent.
	seedLabel string
}

func (c *checker) open() (*sql.DB, error) {
	if c.db != nil {
		return c.db, nil
	}
	db, err := sql.Open("sqlite", "file:"+c.dbPath+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	c.db = db
	return db, nil
}

func (c *checker) close() {
	if c.db != nil {
		c.db.Close()
		c.db = nil
	}
}

type row struct {
	id                                                                    int64
	guid, typ, trig, key, setting, source, local, localTime, zone, status string
	scheduledOn, updatedOn                                                time.Time
	nextRetry                                                             *time.Time
	failure, reason                                                       string
	hold                                                                  bool
}

type job struct {
	key, effectKey, schedulerKey, channel, status, lastError string
	nextAttempt                                              bool
	revision                                                 int64
	recipient, unit                                          string
	sentOn, next                                             *time.Time
	firstClaimed                                             *time.Time // FirstClaimedOn
}

func ms(v int64) time.Time { return time.UnixMilli(v).UTC() }

// msOrNil is ms of a nullable column: nil for NULL.
func msOrNil(v *int64) *time.Time {
	if v == nil {
		return nil
	}
	t := ms(*v)
	return &t
}

// queryAll runs q on the checker's database and returns every row, each read by scan, in
// the query's order; the first error (open, query, a scan, or the rows' own) ends it.
func queryAll[T any](ctx context.Context, c *checker, q string, scan func(rs *sql.Rows) (T, error)) ([]T, error) {
	db, err := c.open()
	if err != nil {
		return nil, err
	}
	rs, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []T
	for rs.Next() {
		v, err := scan(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rs.Err()
}

func (c *checker) rows(ctx context.Context) ([]row, error) {
	return queryAll(ctx, c, `SELECT Id, Guid, AutomationType, TriggerType, SchedulerKey, COALESCE(SettingGuid,''), SourceEntityGuid,
		ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ScheduledOn, NextRetryOn, COALESCE(FailureReasonCode,''), COALESCE(ReasonCode,''), IsOnSupportHold, UpdatedOn
		FROM AutomationScheduler ORDER BY Id`, func(rs *sql.Rows) (row, error) {
		var r row
		var sched, updated int64
		var next *int64
		err := rs.Scan(&r.id, &r.guid, &r.typ, &r.trig, &r.key, &r.setting, &r.source, &r.local, &r.localTime, &r.zone, &r.status,
			&sched, &next, &r.failure, &r.reason, &r.hold, &updated)
		r.scheduledOn, r.updatedOn, r.nextRetry = ms(sched), ms(updated), msOrNil(next)
		return r, err
	})
}

func (c *checker) jobs(ctx context.Context) ([]job, error) {
	return queryAll(ctx, c, `SELECT DeliveryKey, EffectKey, SchedulerKey, Channel, Status, COALESCE(LastError,''), NextAttemptOn IS NOT NULL, Revision,
		Recipient, BusinessUnitId, SentOn, NextAttemptOn, FirstClaimedOn
		FROM NotificationJob ORDER BY Id`, func(rs *sql.Rows) (job, error) {
		var j job
		var sentOn, next, first *int64
		err := rs.Scan(&j.key, &j.effectKey, &j.schedulerKey, &j.channel, &j.status, &j.lastError, &j.nextAttempt, &j.revision,
			&j.recipient, &j.unit, &sentOn, &next, &first)
		j.firstClaimed, j.sentOn, j.next = msOrNil(first), msOrNil(sentOn), msOrNil(next)
		return j, err
	})
}

func (c *checker) count(ctx context.Context, q string) (int, error) {
	db, err := c.open()
	if err != nil {
		return 0, err
	}
	var n int
	err = db.QueryRowContext(ctx, q).Scan(&n)
	return n, err
}

// unpublished returns the MessageIds of the outbox rows not yet published (at most 10,000).
func (c *checker) unpublished(ctx context.Context) ([]string, error) {
	return queryAll(ctx, c, `SELECT MessageId FROM Outbox WHERE PublishedOn IS NULL ORDER BY Id LIMIT 10000`, func(rs *sql.Rows) (string, error) {
		var id string
		err := rs.Scan(&id)
		return id, err
	})
}

// noteEagerLost notes the rows an eager publish that was lost would have published (those
// unpublished now), for InvEagerLost; at most 10,000 are kept.
func (c *checker) noteEagerLost(ctx context.Context) error {
	ids, err := c.unpublished(ctx)
	if err != nil {
		return err
	}
	if c.eagerLost == nil {
		c.eagerLost = map[string]bool{}
	}
	for _, id := range ids {
		if len(c.eagerLost) >= 10_000 {
			break
		}
		c.eagerLost[id] = true
	}
	return nil
}

// nextWork is the final drain's view: the next instant a row or delivery wakes, and busy
// when the outbox holds unpublished messages or a delivery waits for its dispatch.
func (c *checker) nextWork(ctx context.Context, rt *app.Runtime) (*time.Time, bool, error) {
	wake, err := rt.Store.SchedulerNextWakeUp(ctx)
	if err != nil {
		return nil, false, err
	}
	if dw, err := rt.Store.NotificationNextWakeUp(ctx); err != nil {
		return nil, false, err
	} else if dw != nil && (wake == nil || dw.Before(*wake)) {
		wake = dw
	}
	// Campaign retries, lookups and expired command leases (none until campaigns enter the
	// workload; docs/simulation.md).
	if cw, err := rt.Store.CampaignNextWakeUp(ctx); err != nil {
		return nil, false, err
	} else if cw != nil && (wake == nil || cw.Before(*wake)) {
		wake = cw
	}
	n, err := c.count(ctx, `SELECT (SELECT COUNT(*) FROM Outbox WHERE PublishedOn IS NULL) +
		(SELECT COUNT(*) FROM NotificationJob WHERE Status IN ('Queued','Sending') AND NextAttemptOn IS NULL)`)
	if err != nil {
		return nil, false, err
	}
	fees, err := c.billingWork(ctx)
	return wake, n > 0 || fees, err
}

type report struct {
	c  *checker
	vs []Violation
}

func (r *report) check(inv string, ok bool, format string, a ...any) {
	r.c.checked[inv]++
	if !ok {
		r.vs = append(r.vs, Violation{inv, fmt.Sprintf(format, a...)})
	}
}

func (r *report) err() error {
	if len(r.vs) == 0 {
		return nil
	}
	return &ViolationError{Violations: r.vs}
}

// quiescent checks, mid-run, what must hold at every instant: no double effect, no early
// effect, instants that follow the local-time rule, and rows long due are terminal.
func (c *checker) quiescent(ctx context.Context, now time.Time) error {
	rows, err := c.rows(ctx)
	if err != nil {
		return err
	}
	r := &report{c: c}
	c.safety(r, rows)
	if err := c.checkBudgetSafety(ctx, r); err != nil {
		return err
	}
	for _, rw := range rows {
		// Due since its instant, its retry, or its last write (a row ensured late is due
		// from then).
		due := rw.scheduledOn
		if rw.nextRetry != nil && rw.nextRetry.After(due) {
			due = *rw.nextRetry
		}
		if rw.updatedOn.After(due) {
			due = rw.updatedOn
		}
		if rw.status == "Pending" || rw.status == "Processing" {
			r.check(InvTerminal, !due.Before(now.Add(-Slack)), "row %s is %s, due %s, %s before now", rw.key, rw.status, due.Format(time.RFC3339), now.Sub(due))
		}
	}
	return r.err()
}

// safety: the invariants that hold at every instant.
func (c *checker) safety(r *report, rows []row) {
	c.sink.mu.Lock()
	defer c.sink.mu.Unlock()
	for k, es := range c.sink.effects {
		r.check(InvOnce, len(es) <= 1, "delivery %s (%s, %s) took effect %d times", k, es[0].schedulerKey, es[0].channel, len(es))
		for _, e := range es {
			if !e.scheduledOn.IsZero() {
				r.check(InvNeverEarly, !e.at.Before(e.scheduledOn), "delivery %s took effect at %s, before its scheduled %s", k, e.at.Format(time.RFC3339), e.scheduledOn.Format(time.RFC3339))
			}
		}
	}
	c.checkWebhookOnce(r)
	c.checkSMSOnce(r)
	for _, rw := range rows {
		if rw.trig != "DateBased" {
			continue
		}
		d, err := time.Parse(time.DateOnly, rw.local)
		h, m := parseHM(rw.localTime)
		want := resolve(mustZone(rw.zone), d, h, m)
		r.check(InvLocalTime, err == nil && want.Equal(rw.scheduledOn), "row %s: %s %s in %s is %s by the rule, stored %s",
			rw.key, rw.local, rw.localTime, rw.zone, want.Format(time.RFC3339), rw.scheduledOn.Format(time.RFC3339))
	}
}

// final checks every invariant after the drain, at now.
func (c *checker) final(ctx context.Context, now time.Time) error {
	rows, err := c.rows(ctx)
	if err != nil {
		return err
	}
	jobs, err := c.jobs(ctx)
	if err != nil {
		return err
	}
	r := &report{c: c}
	c.safety(r, rows)
	byKey := map[string]row{}
	for _, rw := range rows {
		byKey[rw.key] = rw
		due := rw.scheduledOn
		if rw.nextRetry != nil && rw.nextRetry.After(due) {
			due = *rw.nextRetry
		}
		if due.After(now) {
			continue
		}
		ok := false
		switch rw.status {
		case "Completed", "Cancelled":
			ok = true
		case "Deactivated":
			ok = rw.reason != ""
		case "Failed", "Pending":
			ok = heldWithReason(rw)
		}
		r.check(InvTerminal, ok, "row %s due %s is %s (reason %q, failure %q, hold %v)", rw.key, due.Format(time.RFC3339), rw.status, rw.reason, rw.failure, rw.hold)
	}
	c.sink.mu.Lock()
	effects := c.sink.effects
	c.sink.mu.Unlock()
	jobsBySched := map[string][]job{}
	for _, j := range jobs {
		jobsBySched[j.schedulerKey] = append(jobsBySched[j.schedulerKey], j)
		// Skipped: the recipient opted out; Queued for quiet hours: waiting until the window
		// ends, past the run (checkPreferences holds both to their rules).
		ok := j.status == "Sent" || (j.status == "Failed" && j.lastError != "") || (j.status == "Unknown" && j.lastError != "" && !j.nextAttempt) ||
			(j.status == "Skipped" && j.lastError != "") || (j.status == "Queued" && strings.HasPrefix(j.lastError, "waiting for quiet hours") && j.nextAttempt)
		r.check(InvDeliveryFinal, ok, "delivery %s (%s, %s) is %s (error %q)", j.key, j.schedulerKey, j.channel, j.status, j.lastError)
		n := len(effects[j.key])
		switch {
		case j.status == "Sent":
			r.check(InvRecorded, n == 1, "delivery %s (%s, %s) is Sent and took effect %d times", j.key, j.schedulerKey, j.channel, n)
		case j.channel == "log" && n > 0:
			r.check(InvRecorded, j.status == "Unknown", "delivery %s (%s) took effect but is recorded %s (%s)", j.key, j.schedulerKey, j.status, j.lastError)
		}
	}
	c.checkWebhookSent(r, jobs)
	c.checkSMSSent(r, jobs)
	c.checkPreferences(r, jobs)
	for k, es := range effects {
		found := false
		for _, j := range jobsBySched[es[0].schedulerKey] {
			found = found || j.key == k
		}
		r.check(InvRecorded, found, "delivery %s (%s) took effect without a NotificationJob", k, es[0].schedulerKey)
	}
	// The projection equals a recomputation from NotificationJob.
	db, err := c.open()
	if err != nil {
		return err
	}
	proj := map[string][2]string{}
	rs, err := db.QueryContext(ctx, `SELECT CommandId, Status, Revision FROM DeliveryProjection`)
	if err != nil {
		return err
	}
	for rs.Next() {
		var id, st string
		var rev int64
		if err := rs.Scan(&id, &st, &rev); err != nil {
			rs.Close()
			return err
		}
		proj[id] = [2]string{st, strconv.FormatInt(rev, 10)}
	}
	rs.Close()
	for _, j := range jobs {
		p, ok := proj[j.key]
		r.check(InvProjection, ok && p[0] == j.status && p[1] == strconv.FormatInt(j.revision, 10),
			"delivery %s is %s revision %d; the projection has %v (present %v)", j.key, j.status, j.revision, p, ok)
		delete(proj, j.key)
	}
	for id := range proj {
		r.check(InvProjection, false, "projection row %s has no NotificationJob", id)
	}
	n, err := c.count(ctx, `SELECT COUNT(*) FROM Outbox WHERE PublishedOn IS NULL`)
	if err != nil {
		return err
	}
	r.check(InvOutboxDrained, n == 0, "%d outbox messages never published", n)
	if len(c.eagerLost) > 0 {
		left, err := c.unpublished(ctx)
		if err != nil {
			return err
		}
		stuck := 0
		for _, id := range left {
			if c.eagerLost[id] {
				stuck++
			}
		}
		r.check(InvEagerLost, stuck == 0, "%d of %d outbox rows whose eager publish was lost were never published", stuck, len(c.eagerLost))
	}
	// One completion per row (trace: an attempt's Completed record is written after its
	// guarded write succeeded).
	if tr := c.trace(); tr != nil {
		for _, rw := range rows {
			if rw.status != "Completed" {
				continue
			}
			recs, err := tr.JobsByKey(ctx, rw.key)
			if err != nil {
				return err
			}
			done := 0
			for _, rec := range recs {
				if rec.RowGuid == rw.guid && rec.Outcome == trace.OutcomeCompleted {
					done++
				}
			}
			r.check(InvCompletedOnce, done <= 1, "row %s was completed by %d attempts", rw.key, done)
		}
	}
	c.oracle(r, rows, jobsBySched, effects)
	if st := c.attributes(); st != nil {
		if err := c.checkLoyalty(ctx, r, st, c.reordered); err != nil {
			return err
		}
	}
	if err := c.checkBudgetFinal(ctx, r); err != nil {
		return err
	}
	if err := c.checkStopDuringCharge(ctx, r); err != nil {
		return err
	}
	if err := c.checkCampaigns(ctx, r); err != nil {
		return err
	}
	if err := c.checkDeadLetters(ctx, r); err != nil {
		return err
	}
	return r.err()
}

// oracle compares the run with the model's expectations.
func (c *checker) oracle(r *report, rows []row, jobsBySched map[string][]job, effects map[string][]effect) {
	ex := c.w.Expect()
	occ := map[occKey]row{}
	thr := map[thrKey]row{}
	for _, rw := range rows {
		if rw.typ != "Reminder" {
			continue
		}
		if i := strings.Index(rw.key, ":threshold:"); i >= 0 {
			// …:threshold:{metric}:{level}:{policy}:…
			if f := strings.Split(rw.key[i+len(":threshold:"):], ":"); len(f) >= 2 {
				if lv, err := strconv.ParseFloat(f[1], 64); err == nil {
					thr[thrKey{rw.setting, rw.source, lv}] = rw
				}
			}
			continue
		}
		parts := strings.Split(rw.key, ":")
		if len(parts) < 3 {
			continue
		}
		off, err := strconv.Atoi(parts[len(parts)-1])
		if err != nil {
			continue // overdue or shortened keys
		}
		occ[occKey{rw.setting, rw.source, parts[len(parts)-2], off}] = rw
	}
	tookEffect := func(key string) int {
		n := 0
		for _, j := range jobsBySched[key] {
			n += len(effects[j.key])
		}
		return n
	}
	for _, k := range sortedOcc(ex.Must) {
		at := ex.Must[k]
		rw, ok := occ[k]
		if !ok {
			r.check(InvOracleDue, false, "occurrence %s due %s has no row", k, at.Format(time.RFC3339))
			continue
		}
		switch rw.status {
		case "Completed":
			r.check(InvOracleDue, rw.scheduledOn.Equal(at), "occurrence %s: row %s scheduled %s, the model says %s", k, rw.key, rw.scheduledOn.Format(time.RFC3339), at.Format(time.RFC3339))
			r.check(InvOracleDue, len(jobsBySched[rw.key]) > 0, "occurrence %s: row %s completed without a delivery", k, rw.key)
		case "Failed":
			r.check(InvOracleDue, heldWithReason(rw), "occurrence %s: row %s failed without hold or reason", k, rw.key)
		case "Pending":
			r.check(InvOracleDue, heldWithReason(rw), "occurrence %s due %s: row %s is Pending and not on support hold with a reason", k, at.Format(time.RFC3339), rw.key)
		default:
			r.check(InvOracleDue, false, "occurrence %s due %s: row %s is %s (%s)", k, at.Format(time.RFC3339), rw.key, rw.status, rw.reason)
		}
	}
	for _, k := range sortedOcc(ex.MustNot) {
		rw, ok := occ[k]
		if !ok {
			r.c.checked[InvOracleNotDue]++
			continue
		}
		n := tookEffect(rw.key)
		r.check(InvOracleNotDue, n == 0 && rw.status != "Completed", "occurrence %s was never due, yet row %s is %s and took effect %d times", k, rw.key, rw.status, n)
	}
	for k := range ex.ThrMust {
		rw, ok := thr[k]
		r.check(InvThresholdFired, ok && (rw.status == "Completed" || heldWithReason(rw)), "level %v of %s (setting %s) was reached; its row: present %v, %s %s", k.Level, k.Source, k.Setting, ok, rw.status, rw.reason)
	}
	for k := range ex.ThrNever {
		rw, ok := thr[k]
		r.check(InvThresholdFired, !ok || (rw.status != "Completed" && tookEffect(rw.key) == 0), "level %v of %s was never reached, yet row %s is %s", k.Level, k.Source, rw.key, rw.status)
	}
	var refs []EventRef
	for ref := range ex.Redeems {
		refs = append(refs, ref)
	}
	sort.Slice(refs, func(i, j int) bool {
		return refs[i].ID < refs[j].ID || refs[i].ID == refs[j].ID && refs[i].Source < refs[j].Source
	})
	for i, ref := range refs {
		js := jobsBySched[gateway.UserMessageKey(ref.Source, ref.ID)]
		r.check(InvGatewayNotify, len(js) == 1, "gateway event %s from %s made %d deliveries", ref.ID, ref.Source, len(js))
		// Dedupe is per (source, id): the same id from another source is another event with
		// its own message and delivery.
		if i > 0 && refs[i-1].ID == ref.ID {
			prev := jobsBySched[gateway.UserMessageKey(refs[i-1].Source, ref.ID)]
			r.check(InvSourceIDDedupe, len(prev) == 1 && len(js) == 1, "id %s from %s and from %s: %d and %d deliveries, want one each",
				ref.ID, refs[i-1].Source, ref.Source, len(prev), len(js))
		}
	}
}

// heldWithReason reports whether a row waits on support hold with a failure reason: Failed
// after its attempts ran out, or Pending on hold, which is the same wait in another status
// (an InputHash conflict keeps the row's status; ensure reactivating a held Failed row makes
// it Pending and keeps the hold — the store conformance suite's "Failed same hash
// reactivates"). Either way only support releases it.
func heldWithReason(rw row) bool {
	return rw.hold && rw.failure != "" && (rw.status == "Failed" || rw.status == "Pending")
}
