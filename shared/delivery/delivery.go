package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/topology"
)

// Key returns the delivery key of one (SchedulerKey, channel, recipient): "dlv_" + 32 hex
// digits of sha256 over the three, with the recipient trimmed and lower-cased (a URL only in
// its scheme and host: its path and query are case-sensitive). It is the NotificationJob's
// identity, the outbox MessageId and the provider idempotency key, so a redelivered request
// can never produce a second delivery (docs/architecture.md#dispatch).
func Key(schedulerKey, channel, recipient string) string {
	sum := sha256.Sum256([]byte(schedulerKey + "\x00" + channel + "\x00" + normalizeRecipient(recipient)))
	return "dlv_" + hex.EncodeToString(sum[:16])
}

// normalizeRecipient trims r and lower-cases it, except the path, query and fragment of a URL
// ("scheme://authority/…"), which keep their case.
func normalizeRecipient(r string) string {
	r = strings.TrimSpace(r)
	i := strings.Index(r, "://")
	if i <= 0 {
		return strings.ToLower(r)
	}
	rest := r[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	return strings.ToLower(r[:i+3+end]) + rest[end:]
}

// DispatchMessage is the body of a notification-dispatch message (JSON).
type DispatchMessage struct {
	DeliveryKey string `json:"deliveryKey"`
}

// Request describes one delivery to build.
type Request struct {
	SchedulerKey   string
	BusinessUnitID string
	Channel        string
	Recipient      string
	Template       string
	Payload        any // JSON-encodable render data: a JSON object (the template's fields)
	// LocalDate is the business unit's local day of the occurrence ("YYYY-MM-DD"), the day
	// the reporting counts the delivery under; "" = the UTC date at hand-off.
	LocalDate string
}

// Build turns requests into NotificationJob rows and their outbox messages, ready for
// store.SchedulerCompleteParams. Duplicate (channel, recipient) pairs collapse to one. The
// command's EffectKey is its delivery key: one (SchedulerKey, channel, recipient) is one
// effect, unique per business unit (docs/architecture.md#commands).
func Build(reqs []Request) ([]store.NotificationRequest, []store.OutboxMessage, error) {
	var jobs []store.NotificationRequest
	var msgs []store.OutboxMessage
	seen := map[string]bool{}
	for _, r := range reqs {
		if r.Channel == "" || r.Recipient == "" {
			return nil, nil, fmt.Errorf("delivery: channel and recipient are required (key %s)", r.SchedulerKey)
		}
		k := Key(r.SchedulerKey, r.Channel, r.Recipient)
		if seen[k] {
			continue
		}
		seen[k] = true
		payload, err := json.Marshal(r.Payload)
		if err != nil {
			return nil, nil, fmt.Errorf("delivery: payload: %w", err)
		}
		body, _ := json.Marshal(DispatchMessage{DeliveryKey: k})
		jobs = append(jobs, store.NotificationRequest{DeliveryKey: k, EffectKey: k, LocalDate: r.LocalDate, SchedulerKey: r.SchedulerKey, BusinessUnitID: r.BusinessUnitID,
			Channel: r.Channel, Recipient: strings.TrimSpace(r.Recipient), Template: r.Template, PayloadJSON: string(payload)})
		msgs = append(msgs, store.OutboxMessage{MessageID: k, Destination: topology.NotificationDispatchQueue, Body: body})
	}
	return jobs, msgs, nil
}

// Relay publishes unsent outbox messages (OutboxRelay, docs/architecture.md#hand-off): it marks a message published
// only after the broker accepted it, and retries later with the same MessageId.
//
// When the store implements store.OutboxLeaseStore (every SQL dialect does), the relay first
// leases its batch (docs/campaigns.md#outbox): one lease over the batch's Id range; rows a
// live lease holds, and rows whose RetryAt has not come, are not in it, so two relays never
// publish one row at once; a relay that dies leaves its rows to the next after Lease. A
// failed publish sets the row's RetryAt (RetryDelay doubled per attempt, at most
// MaxRetryDelay) and hands the rest of the batch back; until that row is published, no claim
// (this relay's, another's, the eager publisher's) takes a later row of its session (same
// destination and SessionID), so a session's messages go out in commit order
// (store.OutboxClaimParams; other sessions keep flowing). Once the batch is marked the lease is
// given back; with MarkOnSettle, once the run is over and every row it published was
// settled and marked (releaseMarked).
type Relay struct {
	Store     store.DeliveryStore
	Publisher bus.Publisher
	Clock     automation.Clock
	// Batch is the rows one RunOnce claims (default 100). Drain stops after a claim that
	// found fewer, so keep it at or under the store's cap on one claim (SQL Server's
	// MaxClaim, 300), or every Drain is one round.
	Batch int
	Log   *slog.Logger
	// Lease bounds one batch's claim (default 1 min): longer than publishing a batch takes.
	// A run that has used half of it hands the rows it has not begun back (RunOnce).
	Lease time.Duration
	// RetryDelay is the wait after a row's first failed publish (default 1 s), doubled per
	// further attempt up to MaxRetryDelay (default 5 min).
	RetryDelay, MaxRetryDelay time.Duration
	// Hooks are fault-injection points for the deterministic simulator (shared/sim); nil in
	// production.
	Hooks *RelayHooks
	// MarkOnSettle is for a publisher that is not durable (the embedded runtime's in-process
	// bus, which loses what it holds when the process stops, where Service Bus keeps every
	// message it accepted): the relay then leaves a published row unpublished, under its
	// lease, until the bus settles the message and calls Settled, and marks the settled rows
	// together (FlushSettled: after each bus drain, at the start of RunOnce, and as soon as
	// store.MaxBatch of them wait): one transaction per drain, not one per message. A crash
	// before the mark leaves the row to the next relay once the lease expires, which
	// publishes it again with the same MessageId: at-least-once, as on Service Bus, and
	// every consumer is idempotent.
	MarkOnSettle bool
	// Room, when set, is asked before each batch is claimed: false means the consumers
	// hold enough already (the in-process bus's waiting messages past a bound), and RunOnce
	// claims nothing and reports BusFull, exactly as a full bus does. With MarkOnSettle
	// every message the bus holds keeps its row unpublished and leased, and every claim
	// walks those rows (the index of unpublished rows), so without this bound a claim costs
	// as much as the bus holds (docs/performance.md, "Bounded in flight").
	Room func() bool
	// RescanEvery is how often, at the most, a claim walks the outbox from its oldest
	// unpublished row (default 1 s, by Clock). Between two such claims a claim starts past
	// the highest row this relay claimed (store.OutboxClaimParams.AfterID), so it does not
	// step over the rows it still has in flight, which on the in-process bus stay unpublished
	// and leased until settled (docs/performance.md, "Claims past the rows in flight"). Rows
	// it gave back make the next claim a full one, and so are all claims until the RetryAt of
	// a row it set to retry came; rows freed otherwise (another relay's lease ended, a
	// lower Id committed late) wait at most RescanEvery, or the OutboxRelay timer. Negative:
	// every claim is a full one.
	RescanEvery time.Duration
	// FullDestinations, when set, is asked before each claim (after Room): the destinations
	// whose consumers hold their share of the in-process bus already. The claim leaves their
	// rows out (store.OutboxClaimParams.SkipDestinations), so a slow destination stops only
	// its own rows and the others' keep flowing (issue 39: campaign-commands held the whole
	// in-flight bound, and tracking and events waited behind it). A left-out row stays
	// unpublished, under no lease, and keeps its MessageId; a later claim takes it. Order
	// within a destination (and so within each of its sessions) is kept: once a claim left a
	// destination out, every claim leaves it out too, until it has room again and a claim of
	// its rows alone, from its floor, takes it back in Id order (held; skipFor). At most
	// store.MaxSkipDestinations names are used. Only with a leasing store.
	FullDestinations func() []string
	// MarksGathered, when set and true, says that the settled rows' marks are written
	// together on a timer well within Lease (the embedded runtime while its eager publisher
	// runs: app's settledMarks), so RunOnce does not flush them before each claim.
	MarksGathered func() bool

	mu sync.Mutex
	// claimedTo is the highest row id this relay claimed; rescanAt when the next claim
	// walks from the oldest row (zero: the next one does); retryUntil the latest RetryAt
	// this relay set, until which every claim does (claimFrom). All under mu.
	claimedTo  int64
	rescanAt   time.Time
	retryUntil time.Time
	// held: destinations a claim left out (FullDestinations) since the last claim from the
	// oldest row that took them: their left-out rows lie below claimedTo, so a claim past it
	// must leave them out too, or it would publish a later row of theirs first. Bounded by
	// the destinations FullDestinations names. Each maps to its floor: every row of it
	// a claim left out lies past that Id (the AfterID of the claim that first left it out,
	// moved up as claims from at or below it take its rows in order; 0 after rows were handed
	// back or set to retry, which may lie below it). A held destination with room again is
	// taken back alone, from its floor (the lowest of those with room first; skipFor).
	held      map[string]int64
	inflight  map[string]int64 // MessageId -> outbox row id, published and not yet settled
	unsettled map[int64]int    // outbox row id -> its messages in inflight (an envelope has several)
	settled   []int64          // rows whose every message settled, not yet marked (FlushSettled)
	// With MarkOnSettle and a leasing store, a claim's lease is given back once its run is
	// over and every row it published is marked: claimOf maps a tracked row to its claim's
	// token, claimRows counts per token those rows plus one while its RunOnce runs.
	claimOf   map[int64]string
	claimRows map[string]int
	// full: the last RunOnce stopped at a full in-process bus (BusFull).
	full atomic.Bool
	// Claims counts the relay's claims by kind and outcome; the zero value is ready.
	Claims ClaimMetrics
}

// ClaimMetrics count a relay's claims (store.OutboxLeaseStore.OutboxClaim, each one write
// transaction); the herd bench reports them (docs/performance.md, "The herd's regression").
type ClaimMetrics struct {
	Claims     atomic.Int64 // claims made
	Empty      atomic.Int64 // claims that found no row
	Rows       atomic.Int64 // rows claimed, in all
	FromOldest atomic.Int64 // claims from the oldest row (AfterID 0)
	// TakenBack: claims of one held destination's rows from its floor, because it had room
	// again (store.OutboxClaimParams.Destination).
	TakenBack atomic.Int64
	// HeldWalks: claims that left a held destination out starting below its floor with no
	// bound at or below it; each walks every row of it left out (a herd's backlog), one table
	// read a row.
	HeldWalks atomic.Int64
	// Bounded: claims from the oldest row that stopped below the lowest floor of the held
	// destinations they left out (store.OutboxClaimParams.BeforeID).
	Bounded atomic.Int64
}

// BusFull reports whether the last RunOnce stopped because the in-process bus was full
// (bus.ErrQueueFull): the rows wait for the consumers to make room, and whoever drains the
// bus should wake the publisher again (Pump.Notify).
func (r *Relay) BusFull() bool { return r.full.Load() }

// RelayHooks are the relay's named fault points. A non-nil error stops the run there as a
// crash would: nothing after the point is written and RunOnce returns the error.
type RelayHooks struct {
	// AfterPublish runs once the broker accepted the messages of a run (their outbox ids)
	// and before they are marked published.
	AfterPublish func(ctx context.Context, ids []int64) error
}

// RunOnce publishes up to Batch outbox rows, oldest first, and returns how many messages
// were published (an envelope row, store.OutboxMessage.Envelope, publishes each of its
// items as its own message, in order, and counts them all). It stops at the first publish
// failure (order is kept; the rest wait for the next run); an envelope whose body cannot be
// read fails the same way and is retried later, never dropped.
func (r *Relay) RunOnce(ctx context.Context) (int, error) {
	n, _, err := r.runOnce(ctx)
	return n, err
}

// batchOrDefault is Batch, or its default of 100.
func (r *Relay) batchOrDefault() int {
	if r.Batch == 0 {
		return 100
	}
	return r.Batch
}

// runOnce is RunOnce, also returning how many rows it claimed (Drain stops after a claim
// that found fewer than a batch).
func (r *Relay) runOnce(ctx context.Context) (int, int, error) {
	n, claimed, _, err := r.runOnceMore(ctx)
	return n, claimed, err
}

// runOnceMore is runOnce, also reporting whether the claim took a held destination back
// (skipFor): such a claim finding fewer than a batch says nothing of the other destinations'
// rows past the rows claimed before, so Drain goes on after it.
func (r *Relay) runOnceMore(ctx context.Context) (_, _ int, takenBack bool, _ error) {
	batch := r.batchOrDefault()
	r.full.Store(false)
	// Settled rows first: one whose lease ran out while its mark waited is not leased and
	// published again. Unless the marks are gathered elsewhere (MarksGathered), within a
	// fraction of the lease.
	if r.MarksGathered == nil || !r.MarksGathered() {
		if err := r.FlushSettled(ctx); err != nil {
			return 0, 0, takenBack, err
		}
	}
	if r.Room != nil && !r.Room() {
		r.full.Store(true)
		return 0, 0, takenBack, nil
	}
	leased, isLeased := r.Store.(store.OutboxLeaseStore)
	var msgs []store.OutboxMessage
	var err error
	if isLeased {
		now := r.Clock.Now()
		from := r.claimFrom(now)
		c := claim{from: from}
		if r.FullDestinations != nil {
			c = r.skipFor(from, r.FullDestinations())
		}
		msgs, err = leased.OutboxClaim(ctx, store.OutboxClaimParams{Now: now, Lease: r.leaseOrDefault(), Limit: batch,
			AfterID: c.from, BeforeID: c.before, SkipDestinations: c.skip, Destination: c.only})
		r.countClaim(c, len(msgs))
		if err == nil && r.FullDestinations != nil {
			r.claimedSkipping(c, msgs, batch)
		}
		takenBack = c.only != ""
		if err == nil && !takenBack {
			// A claim from the oldest row only to take a held destination back is not a
			// rescan: cut short by its batch, it leaves that destination held (its next rows
			// go by the same way, whenever it has room) and nothing else below the rows
			// claimed before (those rows were taken in order, past them), so the next claim
			// is not made one from the oldest row. Forcing it was, behind the 09:00 herd, a
			// claim from the oldest row that left notification-dispatch out again and walked
			// every one of its left-out rows after nearly every claim (docs/performance.md,
			// "The herd's regression: the relay's claims under the share").
			r.catchUp(from, msgs, batch)
		}
		if len(msgs) > 0 && !takenBack {
			// A take-back claims below the rows claimed before (BeforeID): claimedTo stays.
			r.claimedUpTo(msgs[len(msgs)-1].ID)
		}
	} else {
		msgs, err = r.Store.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: batch})
	}
	if err != nil {
		return 0, 0, takenBack, err
	}
	token := ""
	if isLeased && len(msgs) > 0 {
		token = msgs[0].ClaimToken
		if r.MarkOnSettle {
			r.holdClaim(token)
		}
	}
	var done []int64
	var pubErr error
	published := 0
	// The rows are marked at the end of the run, so it must end within their lease, or
	// another relay takes the published, unmarked rows and publishes them again. An envelope
	// holds up to store.MaxBatch messages, so a batch of rows may take longer than the lease
	// to publish: the rows not begun once half of it is gone are handed back (OutboxRelease)
	// for the next run.
	handBack := r.Clock.Now().Add(r.leaseOrDefault() / 2)
	for i, m := range msgs {
		if isLeased && i > 0 && !r.Clock.Now().Before(handBack) {
			pubErr = r.giveBack(ctx, leased, msgs[i:])
			break
		}
		items, err := m.Items()
		if err == nil {
			err = r.publishRow(ctx, m.ID, token, items)
		}
		if errors.Is(err, bus.ErrQueueFull) {
			r.full.Store(true)
			// The in-process bus is full: back-pressure, not a failed publish. This row and
			// the rest are handed back for a run after the bus drained, with no attempt
			// counted and no RetryAt (a full queue must not push the row minutes out). The
			// messages of the row already accepted come again with the same ids: the bus
			// drops them as duplicates, settling those already handled.
			if isLeased {
				pubErr = r.giveBack(ctx, leased, msgs[i:])
			}
			if r.Log != nil {
				r.Log.DebugContext(ctx, "outbox relay: the bus is full; the rest waits for the next run", "row", m.MessageID, "published", published)
			}
			break
		}
		if err != nil {
			pubErr = fmt.Errorf("outbox relay: publish %s: %w", m.MessageID, err)
			if isLeased {
				retryAt := r.Clock.Now().Add(r.retryDelay(m.Attempts))
				r.retryBy(retryAt)
				pubErr = errors.Join(pubErr, leased.OutboxRetryLater(ctx, m.ID, m.ClaimToken, retryAt))
				if i+1 < len(msgs) {
					// Not without rows: OutboxRelease with no ids gives back the whole claim,
					// the rows published before this one included, which are not marked yet.
					pubErr = errors.Join(pubErr, r.giveBack(ctx, leased, msgs[i+1:]))
				}
			} else {
				_ = r.Store.OutboxRecordAttempt(ctx, m.ID, r.Clock.Now())
			}
			break
		}
		done = append(done, m.ID)
		published += len(items)
	}
	if len(done) > 0 && r.Hooks != nil && r.Hooks.AfterPublish != nil {
		if err := r.Hooks.AfterPublish(ctx, done); err != nil {
			return 0, len(msgs), takenBack, errors.Join(pubErr, fmt.Errorf("outbox relay: after publish: %w", err))
		}
	}
	if len(done) > 0 && !r.MarkOnSettle {
		if err := r.Store.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: done, Now: r.Clock.Now()}); err != nil {
			// Published but not marked: the next run publishes again with the same MessageId,
			// which duplicate detection and the send claim absorb.
			return 0, len(msgs), takenBack, errors.Join(pubErr, err)
		}
	}
	if token != "" && (!r.MarkOnSettle || r.dropClaimRow(token)) {
		// Every row of the claim is marked (on the in-process bus: settled and marked), or
		// waits for its RetryAt: the lease is given back, so a row held back only by it (a
		// RetryAt that came meanwhile) does not wait for the lease to end. Should this fail,
		// the lease simply runs out.
		if err := leased.OutboxRelease(ctx, nil, token); err != nil {
			return published, len(msgs), takenBack, errors.Join(pubErr, err)
		}
	}
	return published, len(msgs), takenBack, pubErr
}

// giveBack hands the claimed rows back (OutboxRelease from the first of them on): rows
// not begun, for the next run, whose claim walks from the oldest row again (they are below
// claimedTo). rows is never empty. Errors: the store's, wrapped.
func (r *Relay) giveBack(ctx context.Context, leased store.OutboxLeaseStore, rows []store.OutboxMessage) error {
	r.rescanNext()
	ids := make([]int64, len(rows))
	for i, x := range rows {
		ids[i] = x.ID
	}
	if err := leased.OutboxRelease(ctx, ids, rows[0].ClaimToken); err != nil {
		return fmt.Errorf("outbox relay: hand back %d rows: %w", len(ids), err)
	}
	return nil
}

// holdClaim counts a RunOnce of claim token as running (claimRows).
func (r *Relay) holdClaim(token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.claimRows == nil {
		r.claimOf, r.claimRows = map[int64]string{}, map[string]int{}
	}
	r.claimRows[token]++
}

// dropClaimRow takes one off claim token's count and reports whether it reached zero: the
// claim's run is over and each row it published is marked.
func (r *Relay) dropClaimRow(token string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropClaimLocked(token)
}

// dropClaimLocked is dropClaimRow with r.mu held.
func (r *Relay) dropClaimLocked(token string) bool {
	if r.claimRows[token]--; r.claimRows[token] > 0 {
		return false
	}
	delete(r.claimRows, token)
	return true
}

// publishRow publishes the messages of outbox row id (one, or an envelope's items, in
// order). With MarkOnSettle each is tracked before its publish (the bus may settle it
// before Publish returns), and the row is marked once every one of them settled. Errors:
// the first failed publish; the messages before it stay published (the row is published
// again later, and each consumer absorbs a repeated MessageId), and the row's tracking is
// dropped, so it is not marked before that.
//
// With telemetry on, the row's publish is one producer span "publish {destination}" whose
// parent is the row's TraceParent (the transaction that wrote it, however long ago and in
// whichever process); an envelope's items, which share that TraceParent, are one batch send
// (messaging.batch.message_count, as the OTel messaging conventions name a batch). Each
// message carries that span's context, and the consumer's invocation continues from it.
// Off, or a row whose trace was not sampled: each message carries the row's TraceParent as
// it is (the same trace and the same "not sampled" decision), and no span is made.
func (r *Relay) publishRow(ctx context.Context, id int64, token string, items []store.OutboxMessage) error {
	if r.MarkOnSettle {
		r.track(id, token, items)
	}
	first := items[0]
	pctx, span := ctx, telemetry.NoSpan()
	traceParent, traceState := first.TraceParent, ""
	if telemetry.Enabled() {
		pctx, span = telemetry.Start(telemetry.Extract(ctx, first.TraceParent, ""), "publish "+first.Destination, trace.SpanKindProducer)
		if span.IsRecording() {
			attrs := []attribute.KeyValue{attribute.String("messaging.system", "servicebus"), attribute.String("messaging.operation.type", "send"),
				attribute.String("messaging.destination.name", first.Destination), telemetry.OutboxID.Int64(id)}
			if len(items) == 1 {
				attrs = append(attrs, attribute.String("messaging.message.id", first.MessageID))
			} else {
				attrs = append(attrs, attribute.Int("messaging.batch.message_count", len(items)))
			}
			span.SetAttributes(attrs...)
		}
		if span.IsRecording() || traceParent == "" {
			// A new context to pass on (an untraced row starts its trace here, sampled or not).
			traceParent, traceState = telemetry.Inject(pctx)
		}
	}
	for i, m := range items {
		msg := bus.Message{ID: m.MessageID, Destination: m.Destination, SessionID: m.SessionID, Body: m.Body, TraceParent: traceParent, TraceState: traceState}
		if err := r.Publisher.Publish(pctx, msg); err != nil {
			telemetry.End(span, err, automation.CodeString(err))
			r.recordPublished(ctx, items, i, true)
			if r.MarkOnSettle {
				r.untrack(id, items)
			}
			if len(items) > 1 {
				return fmt.Errorf("message %s: %w", m.MessageID, err)
			}
			return err
		}
	}
	telemetry.End(span, nil, "")
	r.recordPublished(ctx, items, len(items), false)
	return nil
}

// recordPublished records, once per row, the publish of the first ok of items (and one
// failed when failed), and the row's lag from its commit (its CreatedOn, every item's) when
// any was published. With metrics off it does nothing.
func (r *Relay) recordPublished(ctx context.Context, items []store.OutboxMessage, ok int, failed bool) {
	if !telemetry.MetricsEnabled() || len(items) == 0 {
		return
	}
	m := items[0]
	telemetry.RecordPublished(ctx, m.Destination, ok, failed, r.Clock.Now().Sub(m.CreatedOn))
}

// Settled notes that the (non-durable) bus settled a message the relay published in this
// process (its handler completed it or it was dead-lettered: bus.MemoryOptions.OnSettled);
// its outbox row is marked published by the next FlushSettled, which the embedded runtime
// calls after each bus drain (bus.MemoryOptions.AfterDrain), RunOnce calls before it leases,
// and Settled calls itself once store.MaxBatch rows wait. A message the relay did not
// publish in this process is ignored. If the process stops before the mark, the row's lease
// expires and the message is published again (the consumers are idempotent). Errors: the
// store's, from a flush it ran (the rows stay waiting for the next).
func (r *Relay) Settled(ctx context.Context, messageID string) error {
	r.mu.Lock()
	id, ok := r.inflight[messageID]
	delete(r.inflight, messageID)
	if ok {
		if r.unsettled[id]--; r.unsettled[id] <= 0 {
			delete(r.unsettled, id)
			r.settled = append(r.settled, id)
		}
	}
	full := len(r.settled) >= store.MaxBatch
	r.mu.Unlock()
	if !full {
		return nil
	}
	return r.FlushSettled(ctx)
}

// FlushSettled marks published the rows of the messages settled since the last flush
// (Settled), store.MaxBatch rows per transaction (one, unless earlier flushes failed).
// Rows whose mark failed wait for the next flush. Errors: the store's.
func (r *Relay) FlushSettled(ctx context.Context) error {
	r.mu.Lock()
	ids := r.settled
	r.settled = nil
	r.mu.Unlock()
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), store.MaxBatch)]
		if err := r.Store.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: chunk, Now: r.Clock.Now()}); err != nil {
			r.mu.Lock()
			r.settled = append(ids, r.settled...)
			r.mu.Unlock()
			return fmt.Errorf("outbox relay: mark %d settled messages: %w", len(ids), err)
		}
		r.releaseMarked(ctx, chunk)
		ids = ids[len(chunk):]
	}
	return nil
}

// releaseMarked gives back the lease of each claim whose run is over and whose last
// tracked row is among the marked ids. A failed release is left to the lease's end.
func (r *Relay) releaseMarked(ctx context.Context, ids []int64) {
	leased, ok := r.Store.(store.OutboxLeaseStore)
	if !ok {
		return
	}
	var over []string
	r.mu.Lock()
	for _, id := range ids {
		token, ok := r.claimOf[id]
		if !ok {
			continue
		}
		delete(r.claimOf, id)
		if r.dropClaimLocked(token) {
			over = append(over, token)
		}
	}
	r.mu.Unlock()
	for _, token := range over {
		_ = leased.OutboxRelease(ctx, nil, token)
	}
}

// track notes the messages of outbox row id, claimed under token ("" without a lease), as
// published and not yet settled.
func (r *Relay) track(id int64, token string, items []store.OutboxMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inflight == nil {
		r.inflight, r.unsettled = map[string]int64{}, map[int64]int{}
	}
	if r.claimOf == nil {
		r.claimOf, r.claimRows = map[int64]string{}, map[string]int{}
	}
	if old, ok := r.claimOf[id]; ok && old != token {
		// Published again under a later claim (the first's lease ran out): the first no
		// longer waits for this row.
		r.dropClaimLocked(old)
		delete(r.claimOf, id)
	}
	if _, ok := r.claimOf[id]; !ok && token != "" {
		r.claimOf[id] = token
		r.claimRows[token]++
	}
	for _, m := range items {
		r.inflight[m.MessageID] = id
	}
	n := len(items)
	if n > 1 {
		// Distinct MessageIds: a repeated one settles once.
		seen := make(map[string]bool, n)
		for _, m := range items {
			seen[m.MessageID] = true
		}
		n = len(seen)
	}
	r.unsettled[id] = n
}

// untrack drops the tracking of row id's messages (a publish of the row failed).
func (r *Relay) untrack(id int64, items []store.OutboxMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range items {
		if r.inflight[m.MessageID] == id {
			delete(r.inflight, m.MessageID)
		}
	}
	delete(r.unsettled, id)
	if token, ok := r.claimOf[id]; ok {
		delete(r.claimOf, id)
		r.claimRows[token]-- // the claim's RunOnce still holds one: never zero here
	}
}

// claimFrom is the AfterID of a claim at now: 0 (from the oldest row) when a rescan is due,
// which then schedules the next one RescanEvery later, or while a row this relay set to
// retry waits for its RetryAt (every claim until the last of them came is a full one);
// else the highest row claimed.
func (r *Relay) claimFrom(now time.Time) int64 {
	every := r.RescanEvery
	if every == 0 {
		every = time.Second
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.retryUntil.IsZero() {
		if !now.Before(r.retryUntil) {
			r.retryUntil = time.Time{}
		}
		return 0
	}
	if every < 0 || r.rescanAt.IsZero() || !now.Before(r.rescanAt) {
		r.rescanAt = now.Add(every)
		return 0
	}
	return r.claimedTo
}

// countClaim counts claim k, which found n rows (Claims).
func (r *Relay) countClaim(k claim, n int) {
	c := &r.Claims
	c.Claims.Add(1)
	c.Rows.Add(int64(n))
	if n == 0 {
		c.Empty.Add(1)
	}
	if k.from == 0 && k.only == "" {
		c.FromOldest.Add(1)
	}
	if k.only != "" {
		c.TakenBack.Add(1)
	}
	if k.before > 0 && k.only == "" {
		c.Bounded.Add(1)
	}
}

// claim is what skipFor chose for the next claim: its AfterID (from), its BeforeID (before;
// 0: none), the destinations it leaves out (skip), or the one held destination it takes back
// (only: a claim of that destination's rows alone, store.OutboxClaimParams.Destination).
type claim struct {
	from, before int64
	skip         []string
	only         string
}

// skipFor returns the claim to make where one would start past from, given the destinations
// that are full now (FullDestinations).
//
//   - A claim while a held destination has room again takes that destination back, alone (only; the one with the lowest floor, should several have
//     room): its rows from its floor up to the rows claimed before (before = claimedTo+1), in
//     Id order, through the destination's own index. It steps over no row of another
//     destination, however long a backlog of a full one lies between its rows (behind the
//     herd, the delivery facts' rows lie past every left-out notification-dispatch row), and
//     its lease holds only that destination's rows. Should a rescan have been due (from =
//     0), it is the next claim.
//   - Otherwise a claim leaves out the full and the held destinations, a claim from the
//     oldest row (from = 0, a rescan) included: a held destination's rows are taken only by
//     its take-backs, from its floor. A rescan that took a held destination back from the
//     oldest row, cut short by its batch, made the next claim a rescan too, which, the
//     destination full again, walked its left-out rows.
//   - When each held destination has a floor (above 0), a rescan stops below the lowest
//     one (before): their left-out rows lie past their floors, and every row of
//     another destination between that floor and the rows claimed before was taken in order
//     by the claims past them. A row freed there (a lease of this relay's that ran out)
//     waits for a rescan without that bound, once the held destinations have room.
//
// At most store.MaxSkipDestinations names: should more be full, the rest are claimed as
// before this bound (the in-process bus's queue bound still holds them).
func (r *Relay) skipFor(from int64, full []string) claim {
	r.mu.Lock()
	defer r.mu.Unlock()
	back, floor := "", int64(0)
	for d, f := range r.held {
		if !slices.Contains(full, d) && (back == "" || f < floor || f == floor && d < back) {
			back, floor = d, f
		}
	}
	if back != "" {
		if from == 0 {
			// A rescan was due: it is the next claim.
			r.rescanAt = time.Time{}
		}
		// Its rows flow again, from its floor: none of its left-out rows lies below it.
		return claim{from: floor, before: r.claimedTo + 1, only: back}
	}
	skip := slices.Clone(full)
	for d := range r.held {
		if !slices.Contains(skip, d) {
			skip = append(skip, d)
		}
	}
	slices.Sort(skip)
	if len(skip) > store.MaxSkipDestinations {
		// Too many to name: a claim from the oldest row needs none of the held ones.
		from, skip = 0, slices.Clone(full)
		slices.Sort(skip)
		skip = skip[:min(len(skip), store.MaxSkipDestinations)]
	}
	c := claim{from: from, skip: skip}
	if from == 0 && len(r.held) > 0 {
		var lowest int64 = -1
		for d, f := range r.held {
			if !slices.Contains(skip, d) || f <= 0 {
				lowest = -1
				break
			}
			if lowest < 0 || f < lowest {
				lowest = f
			}
		}
		if lowest > 0 {
			c.before = lowest + 1
		}
	}
	for _, d := range skip {
		if floor, ok := r.held[d]; ok && from < floor && (c.before == 0 || c.before > floor+1) {
			r.Claims.HeldWalks.Add(1)
			break
		}
	}
	return c
}

// claimedSkipping records claim c, which claimed msgs (of a batch of limit). A claim taking a
// held destination back (c.only) took its rows from its floor in Id order: once it reached the
// rows claimed before (it found fewer than limit: its BeforeID is just past them) the
// destination is no longer held; cut short by limit, its floor moves up to the claim's last
// row. A claim from the oldest row without a bound took the held destinations it did not
// leave out in the same way (reached: fewer than limit, or its last row at or past
// claimedTo); a bounded one leaves every held destination out (skipFor). The destinations a
// claim left out are held when it claimed rows (their rows may lie inside its range, below
// claimedTo), from c.from on (a destination held already keeps its floor). Call it before
// claimedUpTo.
func (r *Relay) claimedSkipping(c claim, msgs []store.OutboxMessage, limit int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.only != "" {
		floor, ok := r.held[c.only]
		switch {
		case !ok || floor != c.from:
			// Its floor moved meanwhile (rows handed back or set to retry: 0): left as it is.
		case len(msgs) < limit:
			delete(r.held, c.only)
		default:
			r.held[c.only] = max(floor, msgs[len(msgs)-1].ID)
		}
		return
	}
	if c.from == 0 && c.before == 0 {
		reached := len(msgs) < limit || msgs[len(msgs)-1].ID >= r.claimedTo
		for d, floor := range r.held {
			if slices.Contains(c.skip, d) || floor < c.from {
				continue
			}
			if reached {
				delete(r.held, d)
			} else {
				r.held[d] = max(floor, msgs[len(msgs)-1].ID)
			}
		}
	}
	if len(msgs) == 0 {
		return
	}
	for _, d := range c.skip {
		if r.held == nil {
			r.held = map[string]int64{}
		}
		if _, ok := r.held[d]; !ok {
			r.held[d] = c.from
		}
	}
}

// lowerFloors sets every held destination's floor to 0: rows were handed back or set to
// retry, and may lie below them. r.mu held.
func (r *Relay) lowerFloors() {
	for d := range r.held {
		r.held[d] = 0
	}
}

// catchUp records a claim from AfterID from that claimed msgs (of a batch of limit): one from
// the oldest row cut short by limit below the highest row claimed before (rows handed back,
// or the rows of a session held behind a failed publish, freed once its RetryAt came) makes
// the next claim one from the oldest row too, until such a claim reached the rows claimed
// before; a claim past them (AfterID) would publish a later row of a session before the
// rows left below (order per session, issue 39 item 4). Call it before claimedUpTo.
func (r *Relay) catchUp(from int64, msgs []store.OutboxMessage, limit int) {
	if from != 0 || len(msgs) < limit {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if msgs[len(msgs)-1].ID < r.claimedTo {
		r.rescanAt = time.Time{}
	}
}

// claimedUpTo records that this relay claimed rows up to id.
func (r *Relay) claimedUpTo(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claimedTo = max(r.claimedTo, id)
}

// rescanNext makes the next claim walk from the oldest row (rows were handed back).
func (r *Relay) rescanNext() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rescanAt = time.Time{}
	r.lowerFloors()
}

// retryBy notes a row this relay set to retry at t: claims walk from the oldest row until
// t has come (claimFrom).
func (r *Relay) retryBy(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lowerFloors()
	if t.After(r.retryUntil) {
		r.retryUntil = t
	}
}

// leaseOrDefault is Lease, or its default of one minute.
func (r *Relay) leaseOrDefault() time.Duration {
	if r.Lease <= 0 {
		return time.Minute
	}
	return r.Lease
}

// retryDelay is the wait after a row's (attempts+1)-th failed publish.
func (r *Relay) retryDelay(attempts int) time.Duration {
	d, top := r.RetryDelay, r.MaxRetryDelay
	if d <= 0 {
		d = time.Second
	}
	if top <= 0 {
		top = 5 * time.Minute
	}
	for range min(attempts, 30) {
		if d *= 2; d >= top {
			return top
		}
	}
	return min(d, top)
}
