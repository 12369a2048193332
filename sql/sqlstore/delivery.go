package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

func (s *Store) scanNotification(r rowScanner) (store.NotificationJob, error) {
	var j store.NotificationJob
	var st string
	var tv sql.NullInt64
	err := r.Scan(&j.ID, &j.DeliveryKey, &j.EffectKey, &j.SchedulerKey, &j.BusinessUnitID, &j.Channel, &j.Recipient,
		&j.Template, &j.PayloadJSON, &j.LocalDate, &st, s.nt(&j.ProcessingLeaseExpiresOn), &j.AttemptCount, &j.RetryCount,
		s.nt(&j.NextAttemptOn), &j.IsOnSupportHold, ns(&j.ProviderReference), ns(&j.LastError), &tv, &j.Revision,
		ns(&j.ResolvedBy), ns(&j.ResolutionReason), s.nt(&j.ResolvedOn),
		&j.Version, s.t(&j.CreatedOn), s.t(&j.UpdatedOn), s.nt(&j.SentOn), s.nt(&j.FirstClaimedOn))
	j.Status = store.NotificationStatus(st)
	j.TemplateVersion = tv.Int64
	return j, err
}

// NotificationGetByKey implements store.DeliveryStore.
func (s *Store) NotificationGetByKey(ctx context.Context, deliveryKey string) (store.NotificationJob, error) {
	j, err := s.scanNotification(s.queryRow(ctx, nil, "NotificationGetByKey", sql.Named("DeliveryKey", deliveryKey)))
	if errors.Is(err, sql.ErrNoRows) {
		return j, store.ErrNotFound
	}
	if err != nil {
		return j, fmt.Errorf("%s NotificationGetByKey: %w", s.d.Name, err)
	}
	return j, nil
}

// NotificationClaim implements store.DeliveryStore (the send claim, docs/architecture.md#dispatch): read the job
// with a lock, decide with store.NotificationClaimable, then a Version-guarded update and,
// when the status changes, the fact - one transaction.
func (s *Store) NotificationClaim(ctx context.Context, p store.NotificationClaimParams) (store.NotificationClaimResult, error) {
	if err := checkLease("NotificationClaim", p.Lease); err != nil {
		return store.NotificationClaimResult{}, err
	}
	var res store.NotificationClaimResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = s.claimOne(ctx, tx, p.DeliveryKey, p.Now, p.Lease)
		return err
	})
	return res, err
}

// claimOne is the send claim of one key inside tx, its fact written at once.
func (s *Store) claimOne(ctx context.Context, tx *sql.Tx, key string, now time.Time, lease time.Duration) (store.NotificationClaimResult, error) {
	cur, err := s.scanNotification(s.queryRow(ctx, tx, "NotificationGetByKeyForUpdate", sql.Named("DeliveryKey", key)))
	if errors.Is(err, sql.ErrNoRows) {
		return store.NotificationClaimResult{}, store.ErrNotFound
	}
	if err != nil {
		return store.NotificationClaimResult{}, fmt.Errorf("%s NotificationGetByKeyForUpdate: %w", s.d.Name, err)
	}
	ok, inDoubt := store.NotificationClaimable(cur, now)
	if !ok {
		return store.NotificationClaimResult{Job: cur}, nil
	}
	j, err := s.scanNotification(s.queryRow(ctx, tx, "NotificationClaim",
		sql.Named("LeaseExpiresOn", s.tm(now.Add(lease))),
		sql.Named("Revision", claimRevision(cur)),
		sql.Named("Now", s.tm(now)),
		sql.Named("Id", cur.ID), sql.Named("Version", cur.Version)))
	if errors.Is(err, sql.ErrNoRows) {
		return store.NotificationClaimResult{Job: cur}, fmt.Errorf("%s NotificationClaim: %w", s.d.Name, store.ErrLeaseLost)
	}
	if err != nil {
		return store.NotificationClaimResult{}, fmt.Errorf("%s NotificationClaim: %w", s.d.Name, err)
	}
	if j.Revision != cur.Revision {
		if err := s.writeFact(ctx, tx, j, now); err != nil {
			return store.NotificationClaimResult{}, err
		}
	}
	return store.NotificationClaimResult{Claimed: true, InDoubt: inDoubt, Job: j}, nil
}

// claimRevision is the Revision a send claim of cur writes: one more when the status
// changes to Sending (a fact), the same when an expired Sending claim is taken over.
func claimRevision(cur store.NotificationJob) int64 {
	if cur.Status != store.NotificationSending {
		return cur.Revision + 1
	}
	return cur.Revision
}

// NotificationClaimMany implements store.DeliveryStore: in one transaction, the jobs of
// every key read by NotificationGetManyForUpdate (100 keys per statement); per distinct key
// the decision of NotificationClaim (store.NotificationClaimable) in Go; the claimable jobs
// updated by the multi-row NotificationClaimMany statement (100 per statement, each row
// guarded by the Version read; it returns only Id and the columns it set, which are mapped
// back by Id and patched into the jobs as read, so each result holds the whole job after
// its claim); and the claims' facts, in the keys' order, in one outbox row (insertFacts: an
// envelope when there are several).
//
// A job whose row the guarded update did not return (its Version moved after the read) is
// not claimed: its result shows the job as read, as NotificationClaim's ErrLeaseLost. A
// repeated key is answered as its first occurrence left the job: not claimed, Job the job
// after that claim (or as read, when it was not claimed).
func (s *Store) NotificationClaimMany(ctx context.Context, p store.NotificationClaimManyParams) ([]store.NotificationClaimResult, error) {
	if err := checkClaim("NotificationClaimMany", len(p.DeliveryKeys), p.Lease); err != nil {
		return nil, err
	}
	var out []store.NotificationClaimResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		first := make(map[string]int, len(p.DeliveryKeys)) // key -> index of its first occurrence
		var rows []map[string]any
		for i, k := range p.DeliveryKeys {
			if _, ok := first[k]; !ok {
				first[k] = i
				rows = append(rows, map[string]any{"DeliveryKey": k})
			}
		}
		cur := make(map[string]store.NotificationJob, len(rows))
		if err := s.queryMultiRows(ctx, tx, "NotificationGetManyForUpdate", rows, func(r rowScanner) error {
			j, err := s.scanNotification(r)
			cur[j.DeliveryKey] = j
			return err
		}); err != nil {
			return err
		}
		out = make([]store.NotificationClaimResult, len(p.DeliveryKeys))
		// Decide each distinct key on the job as read; the claimable ones become the
		// statement's rows, in the keys' order.
		lease, now := s.tm(p.Now.Add(p.Lease)), s.tm(p.Now)
		var claims []int // indexes into out of the claimable first occurrences
		var updates []map[string]any
		for i, k := range p.DeliveryKeys {
			j, ok := cur[k]
			if !ok || first[k] != i {
				continue // no job (Claimed false, Job.ID 0), or a repeat answered below
			}
			claimable, inDoubt := store.NotificationClaimable(j, p.Now)
			out[i] = store.NotificationClaimResult{Claimed: claimable, InDoubt: inDoubt && claimable, Job: j}
			if claimable {
				claims = append(claims, i)
				updates = append(updates, map[string]any{"Id": j.ID, "Version": j.Version,
					"LeaseExpiresOn": lease, "Revision": claimRevision(j), "Now": now})
			}
		}
		claimed := make(map[int64]claimedCols, len(updates))
		if err := s.queryMultiRows(ctx, tx, "NotificationClaimMany", updates, func(r rowScanner) error {
			c, err := s.scanClaimed(r)
			if err != nil {
				return err
			}
			claimed[c.id] = c
			return nil
		}); err != nil {
			return err
		}
		facts := make([]store.OutboxMessage, 0, len(claims))
		for _, i := range claims {
			read := out[i].Job
			c, ok := claimed[read.ID]
			if !ok {
				// The Version moved between the read and the guarded update: not ours.
				out[i] = store.NotificationClaimResult{Job: read}
				continue
			}
			j := c.patch(read)
			out[i].Job = j
			if j.Revision != read.Revision {
				m, err := factMessage(j, p.Now)
				if err != nil {
					return err
				}
				facts = append(facts, m)
			}
		}
		for i, k := range p.DeliveryKeys {
			if f := first[k]; f != i {
				out[i] = store.NotificationClaimResult{Job: out[f].Job} // finds the first's claim live
			}
		}
		return s.insertFacts(ctx, tx, p.Now, facts)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// claimedCols are the columns the NotificationClaimMany statement returns: the row's Id and
// every column its update sets. The rest of the claimed job is as NotificationClaimMany
// read it in the same transaction, under the write lock.
type claimedCols struct {
	id, revision, version int64
	status                store.NotificationStatus
	leaseExpiresOn        *time.Time
	attemptCount          int
	updatedOn             time.Time
	firstClaimedOn        *time.Time
}

// scanClaimed scans one row of NotificationClaimMany (Id, Status, ProcessingLeaseExpiresOn,
// AttemptCount, Revision, Version, UpdatedOn, FirstClaimedOn, in that order in both dialects).
func (s *Store) scanClaimed(r rowScanner) (claimedCols, error) {
	var c claimedCols
	var st string
	err := r.Scan(&c.id, &st, s.nt(&c.leaseExpiresOn), &c.attemptCount, &c.revision, &c.version, s.t(&c.updatedOn), s.nt(&c.firstClaimedOn))
	c.status = store.NotificationStatus(st)
	return c, err
}

// patch returns read, the job as read before the claim, with the columns the claim set.
func (c claimedCols) patch(read store.NotificationJob) store.NotificationJob {
	read.Status, read.ProcessingLeaseExpiresOn, read.AttemptCount = c.status, c.leaseExpiresOn, c.attemptCount
	read.Revision, read.Version, read.UpdatedOn, read.FirstClaimedOn = c.revision, c.version, c.updatedOn, c.firstClaimedOn
	return read
}

// scanFinished scans one row of NotificationFinishMany into a job that holds only what the
// statement returns: ID and Version (to map the row back to its item), and the fact's
// columns the update set or may have (Status, Revision, ProviderReference, ResolvedBy, in
// that order in both dialects). Every other field is zero; withIdentity adds the fact's
// identity columns.
func (s *Store) scanFinished(r rowScanner) (store.NotificationJob, error) {
	var j store.NotificationJob
	var st string
	err := r.Scan(&j.ID, &j.Version, &st, &j.Revision, ns(&j.ProviderReference), ns(&j.ResolvedBy))
	j.Status = store.NotificationStatus(st)
	return j, err
}

// withIdentity returns j with the delivery fact's identity columns of from (DeliveryKey,
// EffectKey, BusinessUnitID, SchedulerKey, Channel, LocalDate), which no statement changes
// after the insert.
func withIdentity(j, from store.NotificationJob) store.NotificationJob {
	j.DeliveryKey, j.EffectKey, j.BusinessUnitID = from.DeliveryKey, from.EffectKey, from.BusinessUnitID
	j.SchedulerKey, j.Channel, j.LocalDate = from.SchedulerKey, from.Channel, from.LocalDate
	return j
}

// factIdentities reads the delivery facts' identity columns of the jobs ids
// (NotificationFactKeysMany, 100 per statement) inside tx, by Id.
func (s *Store) factIdentities(ctx context.Context, tx *sql.Tx, ids []int64) (map[int64]store.NotificationJob, error) {
	out := make(map[int64]store.NotificationJob, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows := make([]map[string]any, len(ids))
	for i, id := range ids {
		rows[i] = map[string]any{"Id": id}
	}
	err := s.queryMultiRows(ctx, tx, "NotificationFactKeysMany", rows, func(r rowScanner) error {
		var j store.NotificationJob
		if err := r.Scan(&j.ID, &j.DeliveryKey, &j.EffectKey, &j.BusinessUnitID, &j.SchedulerKey, &j.Channel, &j.LocalDate); err != nil {
			return err
		}
		out[j.ID] = j
		return nil
	})
	return out, err
}

// insertFacts writes the facts of one transaction, created at now: one outbox row for one
// fact, envelope rows (store.NewEnvelope) of up to factsPerEnvelope facts each for more, so
// a batch's facts cost one row, one relay lease and one mark per envelope
// (docs/performance.md, "Facts in envelopes"). A fact's MessageId is written once by
// construction (factMessage), so no repeat is dropped here.
func (s *Store) insertFacts(ctx context.Context, tx *sql.Tx, now time.Time, facts []store.OutboxMessage) error {
	for len(facts) > 0 {
		chunk := facts[:min(len(facts), factsPerEnvelope)]
		facts = facts[len(chunk):]
		row := chunk[0]
		if len(chunk) > 1 {
			var err error
			if row, err = store.NewEnvelope(chunk); err != nil {
				return err
			}
		}
		if err := s.outboxInsert(ctx, tx, now, row); err != nil {
			return err
		}
	}
	return nil
}

// factsPerEnvelope bounds an envelope (about 45 kB of delivery facts), so the relay's batch
// of rows stays bounded in bytes: a batch send claim of store.MaxBatch keys writes 10.
const factsPerEnvelope = 100

// writeFact writes the fact of j's current status (its Revision) to the outbox (docs/architecture.md#facts).
func (s *Store) writeFact(ctx context.Context, tx *sql.Tx, j store.NotificationJob, now time.Time) error {
	m, err := factMessage(j, now)
	if err != nil {
		return err
	}
	return s.outboxInsert(ctx, tx, now, m)
}

// factMessage is the outbox message of the fact of j's current status (its Revision). It
// reads DeliveryKey, EffectKey, BusinessUnitID, SchedulerKey, Channel, LocalDate, Status,
// Revision, ProviderReference and ResolvedBy only (what scanFinished fills in).
func factMessage(j store.NotificationJob, now time.Time) (store.OutboxMessage, error) {
	f := store.DeliveryFact{EventID: store.FactEventID(j.DeliveryKey, j.Revision), CommandID: j.DeliveryKey, EffectKey: j.EffectKey,
		BusinessUnitID: j.BusinessUnitID, SchedulerKey: j.SchedulerKey, Channel: j.Channel, LocalDate: j.LocalDate,
		Status: j.Status, Revision: j.Revision, OccurredOn: ms(now), ProviderReference: j.ProviderReference, ResolvedBy: j.ResolvedBy}
	body, err := json.Marshal(f)
	if err != nil {
		return store.OutboxMessage{}, err
	}
	return store.OutboxMessage{MessageID: f.EventID, Destination: topology.DeliveryFactsTopic, SessionID: j.DeliveryKey, Body: body}, nil
}

// NotificationFinish implements store.DeliveryStore.
func (s *Store) NotificationFinish(ctx context.Context, p store.NotificationFinishParams) error {
	row, err := s.finishRow(p)
	if err != nil {
		return err
	}
	args := make([]any, 0, len(row))
	for name, v := range row {
		args = append(args, sql.Named(name, v))
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		j, err := s.scanNotification(s.queryRow(ctx, tx, "NotificationFinish", args...))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s NotificationFinish: %w", s.d.Name, store.ErrLeaseLost)
		}
		if err != nil {
			return fmt.Errorf("%s NotificationFinish: %w", s.d.Name, err)
		}
		return s.writeFact(ctx, tx, j, p.Now)
	})
}

// NotificationFinishMany implements store.DeliveryStore: in one transaction, the fenced
// updates of every valid item by the multi-row NotificationFinishMany statement (100 per
// statement, each row fenced as NotificationFinish is), the updated rows (only the
// columns of their facts, see scanFinished) mapped back by (Id, Version-1), then the facts
// of the items recorded, in the items' order, in one outbox row (insertFacts: an envelope
// when there are several). An item whose row did not come back gets ErrLeaseLost.
//
// Items of one job (the same ID) behave as they would one after the other: only an item
// whose Token is the job's Version can match, so the statement gets the first item of each
// (ID, Token) and a later item with the same pair gets ErrLeaseLost (the first either
// recorded the outcome, so the job is no longer Sending, or was stale itself).
func (s *Store) NotificationFinishMany(ctx context.Context, ps []store.NotificationFinishParams) ([]error, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	_, itemErrs, err := s.NotificationFinishGroup(ctx, func() []store.NotificationFinishParams { return ps })
	return itemErrs, err
}

// NotificationFinishGroup implements store.DeliveryStore: NotificationFinishMany with the
// items taken by calling take once, inside the transaction (on SQLite, once this process's
// write slot is held), so a group commit records every outcome handed over while it waited
// for the writer. A retried transaction reuses the items taken. It returns the items taken
// (nil when take returned none: nothing is written) with their errors as
// NotificationFinishMany's.
func (s *Store) NotificationFinishGroup(ctx context.Context, take func() []store.NotificationFinishParams) ([]store.NotificationFinishParams, []error, error) {
	var (
		ps    []store.NotificationFinishParams
		f     finishItems
		taken bool
	)
	lost := fmt.Errorf("%s NotificationFinish: %w", s.d.Name, store.ErrLeaseLost)
	var done []error
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if !taken {
			taken = true
			if ps = take(); len(ps) == 0 {
				return nil
			}
			if err := checkLimit("NotificationFinishMany", len(ps)); err != nil {
				return err
			}
			f = s.prepareFinish(ps)
		}
		if len(ps) == 0 {
			return nil
		}
		done = slices.Clone(f.itemErrs)
		finished := make(map[fenceKey]store.NotificationJob, len(f.rows))
		if err := s.queryMultiRows(ctx, tx, "NotificationFinishMany", f.rows, func(r rowScanner) error {
			j, err := s.scanFinished(r)
			if err != nil {
				return err
			}
			finished[fenceKey{j.ID, j.Version - 1}] = j
			return nil
		}); err != nil {
			return err
		}
		// Which items were recorded, and the identity columns of those that carry no
		// claimed job.
		var unknown []int64
		for i, p := range ps {
			if done[i] != nil {
				continue
			}
			k := fenceKey{p.ID, p.Token}
			if _, ok := finished[k]; !ok || f.first[k] != i {
				done[i] = lost
				continue
			}
			if p.Job == nil {
				unknown = append(unknown, p.ID)
			}
		}
		identity, err := s.factIdentities(ctx, tx, unknown)
		if err != nil {
			return err
		}
		var facts []store.OutboxMessage
		var at time.Time // the first recorded item's Now: the envelope's CreatedOn
		for i, p := range ps {
			if done[i] != nil {
				continue
			}
			from := identity[p.ID]
			if p.Job != nil {
				from = *p.Job
			}
			m, err := factMessage(withIdentity(finished[fenceKey{p.ID, p.Token}], from), p.Now)
			if err != nil {
				return err
			}
			if len(facts) == 0 {
				at = p.Now
			}
			facts = append(facts, m)
		}
		return s.insertFacts(ctx, tx, at, facts)
	})
	if err != nil {
		return ps, nil, err
	}
	if len(ps) == 0 {
		return nil, nil, nil
	}
	return ps, done, nil
}

// finishItems is a record's items checked (prepareFinish): itemErrs[i] is item i's
// validation error, rows the statement's rows (one per first valid item of each
// (ID, Token)), first maps (ID, Token) to the index of that item.
type finishItems struct {
	itemErrs []error
	rows     []map[string]any
	first    map[fenceKey]int
}

// prepareFinish checks ps (finishRow, and an item's claimed job names its job) and keeps
// the first valid item of each (ID, Token): a later one can only be stale.
func (s *Store) prepareFinish(ps []store.NotificationFinishParams) finishItems {
	f := finishItems{itemErrs: make([]error, len(ps)), rows: make([]map[string]any, 0, len(ps)), first: make(map[fenceKey]int, len(ps))}
	for i, p := range ps {
		var row map[string]any
		if row, f.itemErrs[i] = s.finishRow(p); f.itemErrs[i] != nil {
			continue
		}
		if p.Job != nil && (p.Job.ID != p.ID || p.Job.DeliveryKey == "") {
			f.itemErrs[i] = fmt.Errorf("NotificationFinishMany: the item's claimed job (Id %d, key %q) is not job %d", p.Job.ID, p.Job.DeliveryKey, p.ID)
			continue
		}
		k := fenceKey{p.ID, p.Token}
		if _, dup := f.first[k]; dup {
			continue
		}
		f.first[k] = i
		f.rows = append(f.rows, row)
	}
	return f
}

// finishRow checks p (the rules of store.NotificationFinishParams) and returns the
// parameters of the NotificationFinish statement, which are also one row of
// NotificationFinishMany.
func (s *Store) finishRow(p store.NotificationFinishParams) (map[string]any, error) {
	var retry int
	switch p.Status {
	case store.NotificationSent, store.NotificationFailed, store.NotificationSkipped:
		if p.NextAttemptOn != nil {
			return nil, fmt.Errorf("NotificationFinish: status %s takes no NextAttemptOn", p.Status)
		}
	case store.NotificationQueued:
		if p.NextAttemptOn == nil || p.Hold {
			return nil, errors.New("NotificationFinish: a retry (Queued) needs NextAttemptOn and no Hold")
		}
		if !p.Wait {
			retry = 1
		}
	case store.NotificationUnknown:
		if p.Hold {
			return nil, errors.New("NotificationFinish: Unknown takes no Hold")
		}
		if p.NextAttemptOn != nil && !p.Wait {
			retry = 1
		}
	default:
		return nil, fmt.Errorf("NotificationFinish: status %q is not Sent, Failed, Skipped, Queued or Unknown", p.Status)
	}
	if p.Wait && (p.NextAttemptOn == nil || p.Status != store.NotificationQueued && p.Status != store.NotificationUnknown) {
		return nil, errors.New("NotificationFinish: Wait only with Queued or Unknown and NextAttemptOn")
	}
	if p.Hold && p.Status != store.NotificationFailed {
		return nil, errors.New("NotificationFinish: Hold only with Failed")
	}
	var tv any
	if p.TemplateVersion > 0 {
		tv = p.TemplateVersion
	}
	return map[string]any{
		"Status":            string(p.Status),
		"ProviderReference": nstr(truncate(p.ProviderReference, store.MaxProviderReference)),
		"LastError":         nstr(truncate(p.Error, maxErrorText)),
		"NextAttemptOn":     s.ntm(p.NextAttemptOn),
		"RetryIncrement":    retry,
		"Hold":              boolInt(p.Hold),
		"TemplateVersion":   tv,
		"Now":               s.tm(p.Now),
		"Id":                p.ID, "Token": p.Token}, nil
}

// maxErrorText bounds LastError (the full error belongs in logs and trace blobs).
const maxErrorText = 2000

// truncate cuts v to at most n characters counted as UTF-16 code units (how SQL Server's
// nvarchar(n) counts), at a character boundary; invalid UTF-8 is replaced, so the cut text
// is valid in every dialect.
func truncate(v string, n int) string {
	if len(v) <= n && utf8.ValidString(v) {
		return v // n bytes hold at most n code units
	}
	v = strings.ToValidUTF8(v, "\uFFFD")
	units := 0
	for i, r := range v {
		units += utf16.RuneLen(r)
		if units > n {
			return v[:i]
		}
	}
	return v
}

// NotificationListUnsent implements store.DeliveryStore.
func (s *Store) NotificationListUnsent(ctx context.Context, afterID int64, limit int) ([]store.NotificationJob, error) {
	return queryPage(ctx, s, "NotificationListUnsent", limit, s.scanNotification, sql.Named("AfterId", afterID), sql.Named("Limit", limit))
}

// NotificationListProjectionBehind implements store.DeliveryStore.
func (s *Store) NotificationListProjectionBehind(ctx context.Context, afterID int64, limit int) ([]store.NotificationJob, error) {
	return queryPage(ctx, s, "NotificationListProjectionBehind", limit, s.scanNotification, sql.Named("AfterId", afterID), sql.Named("Limit", limit))
}

// OutboxListUnpublished implements store.DeliveryStore.
func (s *Store) OutboxListUnpublished(ctx context.Context, p store.OutboxListParams) ([]store.OutboxMessage, error) {
	if err := checkLimit("OutboxListUnpublished", p.Limit); err != nil {
		return nil, err
	}
	return queryAll(ctx, s, nil, "OutboxListUnpublished", func(r rowScanner) (store.OutboxMessage, error) {
		var m store.OutboxMessage
		err := r.Scan(&m.ID, &m.MessageID, &m.Destination, ns(&m.SessionID), &m.Body, &m.Envelope, s.t(&m.CreatedOn), s.nt(&m.PublishedOn), &m.Attempts, ns(&m.TraceParent))
		return m, err
	}, sql.Named("Limit", p.Limit))
}

// OutboxMarkPublished implements store.DeliveryStore.
func (s *Store) OutboxMarkPublished(ctx context.Context, p store.OutboxMarkPublishedParams) error {
	if len(p.IDs) > store.MaxBatch {
		return fmt.Errorf("OutboxMarkPublished: more than %d ids", store.MaxBatch)
	}
	switch len(p.IDs) {
	case 0:
		return nil
	case 1:
		// One id (a relay run that published one message, or a drain that settled one): the
		// prepared single-row statement.
		return s.inTx(ctx, func(tx *sql.Tx) error {
			if _, err := s.exec(ctx, tx, "OutboxMarkPublished", sql.Named("Now", s.tm(p.Now)), sql.Named("Id", p.IDs[0])); err != nil {
				return fmt.Errorf("%s OutboxMarkPublished: %w", s.d.Name, err)
			}
			return nil
		})
	}
	// Many ids: one statement per 100 (OutboxMarkPublishedMany), not one per id.
	rows := make([]map[string]any, len(p.IDs))
	now := s.tm(p.Now)
	for i, id := range p.IDs {
		rows[i] = map[string]any{"Id": id, "Now": now}
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		return s.execRows(ctx, tx, "OutboxMarkPublishedMany", rows)
	})
}

// OutboxRecordAttempt implements store.DeliveryStore.
func (s *Store) OutboxRecordAttempt(ctx context.Context, id int64, _ time.Time) error {
	_, err := s.exec(ctx, nil, "OutboxRecordAttempt", sql.Named("Id", id))
	if err != nil {
		return fmt.Errorf("%s OutboxRecordAttempt: %w", s.d.Name, err)
	}
	return nil
}
