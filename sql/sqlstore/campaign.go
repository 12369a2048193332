package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/topology"
)

var (
	_ store.CampaignStore    = (*Store)(nil)
	_ store.OutboxLeaseStore = (*Store)(nil)
)

func (s *Store) scanCampaign(r rowScanner) (store.Campaign, error) {
	var c store.Campaign
	var st string
	err := r.Scan(&c.BusinessUnitID, &c.CampaignID, &c.Name, &st, &c.RunID, &c.DefinitionJSON, &c.Version, s.t(&c.CreatedOn), s.t(&c.UpdatedOn))
	c.Status = store.CampaignStatus(st)
	return c, err
}

func (s *Store) scanExecution(r rowScanner) (store.CampaignExecution, error) {
	var e store.CampaignExecution
	var st string
	err := r.Scan(&e.ID, &e.ExecutionID, &e.BusinessUnitID, &e.CampaignID, &e.RunID, &e.RecipientID, &e.SourceEventID, &e.LocalDate,
		&st, &e.CurrentIndex, &e.DefinitionJSON, &e.Version, s.t(&e.CreatedOn), s.t(&e.UpdatedOn))
	e.Status = store.ExecutionStatus(st)
	return e, err
}

func (s *Store) scanCommand(r rowScanner) (store.CampaignCommand, error) {
	var c store.CampaignCommand
	var st string
	err := r.Scan(&c.ID, &c.CommandID, &c.EffectKey, &c.ExecutionID, &c.BusinessUnitID, &c.CampaignID, &c.RecipientID, &c.RunID, &c.ActionIndex,
		&c.ActionKey, &c.ActionType, &c.Provider, &c.LocalDate, ns(&c.ParamsJSON), &st, s.nt(&c.LeaseExpiresOn), &c.AttemptCount,
		&c.RetryCount, s.nt(&c.NextAttemptOn), ns(&c.ProviderRef), ns(&c.ResultJSON), ns(&c.LastError), ns(&c.ResolvedBy),
		ns(&c.ResolutionReason), &c.Revision, &c.Version, s.t(&c.CreatedOn), s.t(&c.UpdatedOn), s.nt(&c.FirstClaimedOn))
	c.Status = store.CommandStatus(st)
	return c, err
}

func (s *Store) campaignOne(ctx context.Context, tx *sql.Tx, name, bu, id string) (store.Campaign, error) {
	c, err := s.scanCampaign(s.queryRow(ctx, tx, name, sql.Named("BusinessUnitId", bu), sql.Named("CampaignId", id)))
	if err != nil {
		return c, s.oneErr(name, err)
	}
	c.Triggers, err = queryAll(ctx, s, tx, "CampaignTriggersOf", func(r rowScanner) (string, error) {
		var t string
		return t, r.Scan(&t)
	}, sql.Named("BusinessUnitId", bu), sql.Named("CampaignId", id))
	return c, err
}

// CampaignSave implements store.CampaignStore: insert or guarded update plus the trigger rows,
// in one transaction.
func (s *Store) CampaignSave(ctx context.Context, p store.CampaignSaveParams) (store.Campaign, error) {
	c := p.Campaign
	if c.BusinessUnitID == "" || c.CampaignID == "" || c.RunID == "" {
		return store.Campaign{}, fmt.Errorf("%s CampaignSave: business unit, campaign id and run id are required", s.d.Name)
	}
	var out store.Campaign
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := s.campaignOne(ctx, tx, "CampaignGetForUpdate", c.BusinessUnitID, c.CampaignID)
		exists := err == nil
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if p.ExpectedVersion != nil {
			want := *p.ExpectedVersion
			if (!exists && want != 0) || (exists && cur.Version != want) {
				return fmt.Errorf("%s CampaignSave: expected version %d: %w", s.d.Name, want, store.ErrConflict)
			}
		}
		args := []any{sql.Named("BusinessUnitId", c.BusinessUnitID), sql.Named("CampaignId", c.CampaignID), sql.Named("Name", c.Name),
			sql.Named("Status", string(c.Status)), sql.Named("RunId", c.RunID), sql.Named("DefinitionJson", c.DefinitionJSON),
			sql.Named("Now", s.tm(p.Now))}
		if exists {
			args = append(args, sql.Named("Version", cur.Version))
			if err := s.execOne(ctx, tx, "CampaignUpdate", args...); err != nil {
				return err
			}
		} else if _, err := s.exec(ctx, tx, "CampaignInsert", args...); err != nil {
			return fmt.Errorf("%s CampaignInsert: %w", s.d.Name, err)
		}
		if _, err := s.exec(ctx, tx, "CampaignTriggerDelete", sql.Named("BusinessUnitId", c.BusinessUnitID), sql.Named("CampaignId", c.CampaignID)); err != nil {
			return fmt.Errorf("%s CampaignTriggerDelete: %w", s.d.Name, err)
		}
		seen := map[string]bool{}
		for _, t := range c.Triggers {
			if seen[t] {
				continue
			}
			seen[t] = true
			if _, err := s.exec(ctx, tx, "CampaignTriggerInsert", sql.Named("BusinessUnitId", c.BusinessUnitID), sql.Named("EventType", t),
				sql.Named("CampaignId", c.CampaignID)); err != nil {
				return fmt.Errorf("%s CampaignTriggerInsert: %w", s.d.Name, err)
			}
		}
		out, err = s.campaignOne(ctx, tx, "CampaignGet", c.BusinessUnitID, c.CampaignID)
		if err != nil || p.Audit == nil {
			return err
		}
		a := p.Audit
		if _, err := s.exec(ctx, tx, "CampaignAuditInsert", named("BusinessUnitId", c.BusinessUnitID, "CampaignId", c.CampaignID, "Action", a.Action,
			"StatusBefore", string(cur.Status), "StatusAfter", string(out.Status), "VersionBefore", cur.Version, "VersionAfter", out.Version,
			"Operator", a.Operator, "Reason", a.Reason, "Now", s.tm(p.Now))...); err != nil {
			return fmt.Errorf("%s CampaignAuditInsert: %w", s.d.Name, err)
		}
		return nil
	})
	return out, err
}

// CampaignAuditList implements store.CampaignStore.
func (s *Store) CampaignAuditList(ctx context.Context, bu, campaignID string, limit int) ([]store.CampaignAudit, error) {
	return queryPage(ctx, s, "CampaignAuditList", limit, func(r rowScanner) (store.CampaignAudit, error) {
		var a store.CampaignAudit
		var before, after string
		err := r.Scan(&a.ID, &a.BusinessUnitID, &a.CampaignID, &a.Action, &before, &after, &a.VersionBefore, &a.VersionAfter, &a.Operator, &a.Reason, s.t(&a.CreatedOn))
		a.StatusBefore, a.StatusAfter = store.CampaignStatus(before), store.CampaignStatus(after)
		return a, err
	}, named("BusinessUnitId", bu, "CampaignId", campaignID, "Limit", limit)...)
}

// CampaignGet implements store.CampaignStore.
func (s *Store) CampaignGet(ctx context.Context, bu, id string) (store.Campaign, error) {
	return s.campaignOne(ctx, nil, "CampaignGet", bu, id)
}

// CampaignList implements store.CampaignStore.
func (s *Store) CampaignList(ctx context.Context, bu, afterID string, limit int) ([]store.Campaign, error) {
	if err := checkLimit("CampaignList", limit); err != nil {
		return nil, err
	}
	list, err := queryAll(ctx, s, nil, "CampaignList", s.scanCampaign, sql.Named("BusinessUnitId", bu), sql.Named("AfterId", afterID), sql.Named("Limit", limit))
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i], err = s.campaignOne(ctx, nil, "CampaignGet", bu, list[i].CampaignID); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// CampaignListByTrigger implements store.CampaignStore.
func (s *Store) CampaignListByTrigger(ctx context.Context, bu, eventType string) ([]store.Campaign, error) {
	return queryAll(ctx, s, nil, "CampaignListByTrigger", s.scanCampaign, sql.Named("BusinessUnitId", bu), sql.Named("EventType", eventType))
}

func (s *Store) insertCommand(ctx context.Context, tx *sql.Tx, c store.CampaignCommand, now time.Time) error {
	_, err := s.exec(ctx, tx, "CampaignCommandInsert", sql.Named("CommandId", c.CommandID), sql.Named("EffectKey", c.EffectKey),
		sql.Named("ExecutionId", c.ExecutionID), sql.Named("BusinessUnitId", c.BusinessUnitID), sql.Named("CampaignId", c.CampaignID),
		sql.Named("RecipientId", c.RecipientID), sql.Named("RunId", c.RunID), sql.Named("ActionIndex", c.ActionIndex), sql.Named("ActionKey", c.ActionKey),
		sql.Named("ActionType", c.ActionType), sql.Named("Provider", c.Provider), sql.Named("LocalDate", c.LocalDate),
		sql.Named("Status", string(store.CommandQueued)), sql.Named("Now", s.tm(now)))
	if err != nil {
		return fmt.Errorf("%s CampaignCommandInsert: %w", s.d.Name, err)
	}
	got, err := s.commandOne(ctx, tx, "CampaignCommandGet", c.CommandID)
	if err != nil {
		return fmt.Errorf("%s CampaignCommandInsert: command %q not stored (its effect or step has another command): %w", s.d.Name, c.CommandID, store.ErrConflict)
	}
	if got.ExecutionID != c.ExecutionID || got.ActionIndex != c.ActionIndex || got.EffectKey != c.EffectKey {
		return fmt.Errorf("%s CampaignCommandInsert: command %q is stored for another step: %w", s.d.Name, c.CommandID, store.ErrConflict)
	}
	return nil
}

// CampaignStart implements store.CampaignStore: the execution, its first command and the
// outbox rows in one transaction; an existing execution id writes nothing.
func (s *Store) CampaignStart(ctx context.Context, p store.CampaignStartParams) (store.CampaignStartResult, error) {
	var out store.CampaignStartResult
	err := s.inTx(ctx, func(tx *sql.Tx) (err error) {
		out, err = s.campaignStartTx(ctx, tx, p)
		return err
	})
	return out, err
}

// CampaignStartMany implements store.CampaignStore: each start as CampaignStart writes it,
// all in one transaction, in order.
func (s *Store) CampaignStartMany(ctx context.Context, ps []store.CampaignStartParams) ([]store.CampaignStartResult, error) {
	if len(ps) > store.MaxBatch {
		return nil, fmt.Errorf("CampaignStartMany: more than %d starts", store.MaxBatch)
	}
	out := make([]store.CampaignStartResult, len(ps))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for i, p := range ps {
			r, err := s.campaignStartTx(ctx, tx, p)
			if err != nil {
				return fmt.Errorf("start %d (execution %s): %w", i, p.Execution.ExecutionID, err)
			}
			out[i] = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// campaignStartTx is one CampaignStart inside tx.
func (s *Store) campaignStartTx(ctx context.Context, tx *sql.Tx, p store.CampaignStartParams) (store.CampaignStartResult, error) {
	e := p.Execution
	var out store.CampaignStartResult
	res, err := s.exec(ctx, tx, "CampaignExecutionInsert", sql.Named("ExecutionId", e.ExecutionID), sql.Named("BusinessUnitId", e.BusinessUnitID),
		sql.Named("CampaignId", e.CampaignID), sql.Named("RunId", e.RunID), sql.Named("RecipientId", e.RecipientID),
		sql.Named("SourceEventId", e.SourceEventID), sql.Named("LocalDate", e.LocalDate), sql.Named("CurrentIndex", e.CurrentIndex),
		sql.Named("DefinitionJson", e.DefinitionJSON), sql.Named("Now", s.tm(p.Now)))
	if err != nil {
		return out, fmt.Errorf("%s CampaignExecutionInsert: %w", s.d.Name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return out, err
	}
	if n == 1 {
		if err := s.insertCommand(ctx, tx, p.Command, p.Now); err != nil {
			return out, err
		}
		if err := s.outboxInsertAll(ctx, tx, p.Now, p.Outbox); err != nil {
			return out, err
		}
	}
	out.Created = n == 1
	out.Execution, err = s.executionOne(ctx, tx, "CampaignExecutionGet", e.ExecutionID)
	return out, err
}

func (s *Store) executionOne(ctx context.Context, tx *sql.Tx, name, id string) (store.CampaignExecution, error) {
	e, err := s.scanExecution(s.queryRow(ctx, tx, name, sql.Named("ExecutionId", id)))
	return e, s.oneErr(name, err)
}

func (s *Store) commandOne(ctx context.Context, tx *sql.Tx, name, id string) (store.CampaignCommand, error) {
	c, err := s.scanCommand(s.queryRow(ctx, tx, name, sql.Named("CommandId", id)))
	return c, s.oneErr(name, err)
}

// CampaignExecutionGet implements store.CampaignStore.
func (s *Store) CampaignExecutionGet(ctx context.Context, id string) (store.CampaignExecution, error) {
	return s.executionOne(ctx, nil, "CampaignExecutionGet", id)
}

// CampaignExecutionList implements store.CampaignStore.
func (s *Store) CampaignExecutionList(ctx context.Context, bu, campaignID string, beforeID int64, limit int) ([]store.CampaignExecution, error) {
	if beforeID <= 0 {
		beforeID = math.MaxInt64
	}
	return queryPage(ctx, s, "CampaignExecutionList", limit, s.scanExecution, sql.Named("BusinessUnitId", bu), sql.Named("CampaignId", campaignID),
		sql.Named("BeforeId", beforeID), sql.Named("Limit", limit))
}

// CampaignExecutionFind implements store.CampaignStore.
func (s *Store) CampaignExecutionFind(ctx context.Context, p store.CampaignExecutionFindParams) ([]store.CampaignExecution, error) {
	before := p.BeforeID
	if before <= 0 {
		before = math.MaxInt64
	}
	return queryPage(ctx, s, "CampaignExecutionFind", p.Limit, s.scanExecution, named("BusinessUnitId", p.BusinessUnitID, "CampaignId", p.CampaignID,
		"Status", string(p.Status), "RecipientId", p.RecipientID, "BeforeId", before, "Limit", p.Limit)...)
}

// CampaignExecutionListByRecipient implements store.CampaignStore.
func (s *Store) CampaignExecutionListByRecipient(ctx context.Context, bu, recipientID string, beforeID int64, limit int) ([]store.CampaignExecution, error) {
	if beforeID <= 0 {
		beforeID = math.MaxInt64
	}
	return queryPage(ctx, s, "CampaignExecutionListByRecipient", limit, s.scanExecution, named("BusinessUnitId", bu, "RecipientId", recipientID,
		"BeforeId", beforeID, "Limit", limit)...)
}

// CampaignCommandGet implements store.CampaignStore.
func (s *Store) CampaignCommandGet(ctx context.Context, id string) (store.CampaignCommand, error) {
	return s.commandOne(ctx, nil, "CampaignCommandGet", id)
}

// CampaignCommandsOf implements store.CampaignStore.
func (s *Store) CampaignCommandsOf(ctx context.Context, executionID string) ([]store.CampaignCommand, error) {
	return queryAll(ctx, s, nil, "CampaignCommandsOf", s.scanCommand, sql.Named("ExecutionId", executionID))
}

// writeCommand writes next (decided in Go from cur) guarded by cur.Version, then the fact of
// its status when the Revision moved, and returns the row as stored.
func (s *Store) writeCommand(ctx context.Context, tx *sql.Tx, cur, next store.CampaignCommand, now time.Time) (store.CampaignCommand, error) {
	if next.Status != cur.Status {
		next.Revision = cur.Revision + 1
	}
	next.ProviderRef = cut(next.ProviderRef, store.MaxProviderReference)
	if err := s.execOne(ctx, tx, "CampaignCommandUpdate", sql.Named("ParamsJson", nstr(next.ParamsJSON)), sql.Named("Status", string(next.Status)),
		sql.Named("LeaseExpiresOn", s.ntm(next.LeaseExpiresOn)), sql.Named("AttemptCount", next.AttemptCount), sql.Named("RetryCount", next.RetryCount),
		sql.Named("NextAttemptOn", s.ntm(next.NextAttemptOn)), sql.Named("ProviderRef", nstr(next.ProviderRef)), sql.Named("ResultJson", nstr(next.ResultJSON)),
		sql.Named("LastError", nstr(next.LastError)), sql.Named("ResolvedBy", nstr(next.ResolvedBy)), sql.Named("ResolutionReason", nstr(next.ResolutionReason)),
		sql.Named("Revision", next.Revision), sql.Named("FirstClaimedOn", s.ntm(next.FirstClaimedOn)),
		sql.Named("Now", s.tm(now)), sql.Named("Id", cur.ID), sql.Named("Version", cur.Version)); err != nil {
		return store.CampaignCommand{}, err
	}
	got, err := s.commandOne(ctx, tx, "CampaignCommandGet", cur.CommandID)
	if err != nil {
		return got, err
	}
	if got.Revision != cur.Revision {
		if err := s.writeCampaignFact(ctx, tx, got, now); err != nil {
			return got, err
		}
	}
	return got, nil
}

// cut shortens v to at most n UTF-16 code units at a character boundary.
func cut(v string, n int) string {
	units := 0
	for i, r := range v {
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if units+w > n {
			return v[:i]
		}
		units += w
	}
	return v
}

func (s *Store) writeCampaignFact(ctx context.Context, tx *sql.Tx, c store.CampaignCommand, now time.Time) error {
	f := store.CampaignActionOutcomeEvent{EventID: store.FactEventID(c.CommandID, c.Revision), CommandID: c.CommandID, EffectKey: c.EffectKey,
		ExecutionID: c.ExecutionID, BusinessUnitID: c.BusinessUnitID, CampaignID: c.CampaignID, RunID: c.RunID, RecipientID: c.RecipientID, ActionIndex: c.ActionIndex,
		ActionType: c.ActionType, Provider: c.Provider, LocalDate: c.LocalDate, Status: c.Status, Revision: c.Revision,
		OccurredOn: ms(now), ProviderRef: c.ProviderRef}
	body, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return s.outboxInsert(ctx, tx, now, store.OutboxMessage{MessageID: f.EventID, Destination: topology.CampaignFactsTopic, SessionID: c.CommandID, Body: body})
}

func (s *Store) claimCommand(ctx context.Context, tx *sql.Tx, id string, now time.Time, lease time.Duration, freeze string) (store.CampaignClaimResult, error) {
	cur, err := s.commandOne(ctx, tx, "CampaignCommandGetForUpdate", id)
	if err != nil {
		return store.CampaignClaimResult{}, err
	}
	ok, inDoubt := store.CommandClaimable(cur, now)
	if !ok {
		return store.CampaignClaimResult{Command: cur}, nil
	}
	next := cur
	next.Status = store.CommandRunning
	until := ms(now.Add(lease))
	next.LeaseExpiresOn = &until
	first := ms(store.FirstClaim(cur.AttemptCount, cur.FirstClaimedOn, cur.CreatedOn, now))
	next.FirstClaimedOn = &first
	next.AttemptCount++
	if next.ParamsJSON == "" {
		next.ParamsJSON = freeze
	}
	got, err := s.writeCommand(ctx, tx, cur, next, now)
	if err != nil {
		return store.CampaignClaimResult{}, err
	}
	return store.CampaignClaimResult{Claimed: true, InDoubt: inDoubt, Command: got, Before: cur.Status}, nil
}

// CampaignClaim implements store.CampaignStore.
func (s *Store) CampaignClaim(ctx context.Context, p store.CampaignClaimParams) (store.CampaignClaimResult, error) {
	if err := checkLease("CampaignClaim", p.Lease); err != nil {
		return store.CampaignClaimResult{}, err
	}
	var res store.CampaignClaimResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = s.claimCommand(ctx, tx, p.CommandID, p.Now, p.Lease, p.FreezeParams)
		if err != nil || !res.Claimed || p.InTx == nil {
			return err
		}
		if err := p.InTx(ctx, tx, res.Command); err != nil {
			return fmt.Errorf("CampaignClaim: in-claim hook: %w", err)
		}
		return nil
	})
	return res, err
}

// CampaignClaimMany implements store.CampaignStore: each claim as CampaignClaim makes it,
// with its in-claim hook, all in one transaction, in order.
func (s *Store) CampaignClaimMany(ctx context.Context, ps []store.CampaignClaimParams) ([]store.CampaignClaimResult, error) {
	if len(ps) > store.MaxBatch {
		return nil, fmt.Errorf("CampaignClaimMany: more than %d claims", store.MaxBatch)
	}
	for _, p := range ps {
		if err := checkLease("CampaignClaimMany", p.Lease); err != nil {
			return nil, err
		}
	}
	return batchInTx(ctx, s, ps, func(tx *sql.Tx, i int, p store.CampaignClaimParams) (store.CampaignClaimResult, error) {
		r, err := s.claimCommand(ctx, tx, p.CommandID, p.Now, p.Lease, p.FreezeParams)
		if err != nil {
			return r, fmt.Errorf("claim %d (command %s): %w", i, p.CommandID, err)
		}
		if r.Claimed && p.InTx != nil {
			if err := p.InTx(ctx, tx, r.Command); err != nil {
				return r, fmt.Errorf("claim %d (command %s): in-claim hook: %w", i, p.CommandID, err)
			}
		}
		return r, nil
	})
}

// CampaignClaimDue implements store.CampaignStore: candidates, then each claimed by the same
// rule as CampaignClaim, in one transaction. It freezes no parameters: a command claimed here
// before any claim froze them (its message was lost) is handed back by the worker and claimed
// again by id (shared/campaign.Worker.Sweep).
func (s *Store) CampaignClaimDue(ctx context.Context, p store.CampaignClaimDueParams) ([]store.CampaignClaimResult, error) {
	if err := checkClaim("CampaignClaimDue", p.Limit, p.Lease); err != nil {
		return nil, err
	}
	qb := p.QueuedBefore
	if qb.IsZero() {
		qb = time.Unix(0, 0)
	}
	var out []store.CampaignClaimResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = nil
		ids, err := queryAll(ctx, s, tx, "CampaignCommandListDue", func(r rowScanner) (string, error) {
			var id string
			return id, r.Scan(&id)
		}, sql.Named("Now", s.tm(p.Now)), sql.Named("QueuedBefore", s.tm(qb)), sql.Named("Limit", p.Limit))
		if err != nil {
			return err
		}
		for _, id := range ids {
			r, err := s.claimCommand(ctx, tx, id, p.Now, p.Lease, "")
			if err != nil {
				return err
			}
			if r.Claimed {
				out = append(out, r)
			}
		}
		return nil
	})
	return out, err
}

// CampaignFinish implements store.CampaignStore.
func (s *Store) CampaignFinish(ctx context.Context, p store.CampaignFinishParams) (store.CampaignCommand, error) {
	if err := checkFinish(p); err != nil {
		return store.CampaignCommand{}, err
	}
	var out store.CampaignCommand
	err := s.inTx(ctx, func(tx *sql.Tx) (err error) {
		out, err = s.campaignFinishTx(ctx, tx, p)
		return err
	})
	return out, err
}

// CampaignFinishMany implements store.CampaignStore: each outcome as CampaignFinish writes
// it, in one transaction; a lost lease is its item's Err, any other error the batch's. Each
// item's writes carry its own Trace (campaignFinishTx), not ctx's: one ctx serves them all.
func (s *Store) CampaignFinishMany(ctx context.Context, ps []store.CampaignFinishParams) ([]store.CampaignFinishResult, error) {
	if len(ps) > store.MaxBatch {
		return nil, fmt.Errorf("CampaignFinishMany: more than %d outcomes", store.MaxBatch)
	}
	for i, p := range ps {
		if err := checkFinish(p); err != nil {
			return nil, fmt.Errorf("outcome %d (command %s): %w", i, p.CommandID, err)
		}
	}
	return batchInTx(ctx, s, ps, func(tx *sql.Tx, i int, p store.CampaignFinishParams) (store.CampaignFinishResult, error) {
		c, err := s.campaignFinishTx(ctx, tx, p)
		if errors.Is(err, store.ErrLeaseLost) { // checked before anything of it is written
			return store.CampaignFinishResult{Err: err}, nil
		}
		if err != nil {
			return store.CampaignFinishResult{}, fmt.Errorf("outcome %d (command %s): %w", i, p.CommandID, err)
		}
		return store.CampaignFinishResult{Command: c}, nil
	})
}

// checkFinish refuses CampaignFinishParams that name no outcome CampaignFinish can write.
func checkFinish(p store.CampaignFinishParams) error {
	switch {
	case p.Status.Terminal() && p.NextAttemptOn != nil:
		return fmt.Errorf("CampaignFinish: status %s takes no NextAttemptOn", p.Status)
	case (p.Status == store.CommandQueued || p.Status == store.CommandWaitingBudget) && p.NextAttemptOn == nil:
		return fmt.Errorf("CampaignFinish: %s needs NextAttemptOn", p.Status)
	case p.Status == store.CommandRunning || p.Status == "":
		return fmt.Errorf("CampaignFinish: status %q is not an outcome", p.Status)
	case p.Wait && (p.NextAttemptOn == nil || p.CountRetry):
		return errors.New("CampaignFinish: Wait needs NextAttemptOn and no CountRetry")
	}
	return nil
}

// campaignFinishTx is one CampaignFinish inside tx: ErrLeaseLost before it writes anything.
// Its writes run under p.Trace when it is valid and telemetry is on (the outbox rows'
// TraceParent and InTx's ctx: store.CampaignFinishParams), else under ctx.
func (s *Store) campaignFinishTx(ctx context.Context, tx *sql.Tx, p store.CampaignFinishParams) (out store.CampaignCommand, err error) {
	if p.Trace.IsValid() && telemetry.Enabled() {
		ctx = trace.ContextWithSpanContext(ctx, p.Trace)
	}
	err = func() error {
		cur, err := s.commandOne(ctx, tx, "CampaignCommandGetForUpdate", p.CommandID)
		if err != nil {
			return err
		}
		if cur.Version != p.Token || cur.Status != store.CommandRunning {
			return fmt.Errorf("%s CampaignFinish %s: %w", s.d.Name, p.CommandID, store.ErrLeaseLost)
		}
		next := cur
		next.Status = p.Status
		next.LeaseExpiresOn = nil
		next.NextAttemptOn = nil
		if p.NextAttemptOn != nil {
			t := ms(*p.NextAttemptOn)
			next.NextAttemptOn = &t
		}
		if p.CountRetry {
			next.RetryCount++
		}
		if p.Wait && next.AttemptCount > 0 {
			next.AttemptCount-- // the claim attempted nothing (quiet hours, a busy provider)
		}
		if p.ProviderRef != "" {
			next.ProviderRef = p.ProviderRef
		}
		if p.ResultJSON != "" {
			next.ResultJSON = p.ResultJSON
		}
		next.LastError = p.Error
		out, err = s.writeCommand(ctx, tx, cur, next, p.Now)
		if err != nil {
			return err
		}
		if err := s.outboxInsertAll(ctx, tx, p.Now, p.Outbox); err != nil {
			return err
		}
		if p.InTx != nil {
			if err := p.InTx(ctx, tx, out); err != nil {
				return fmt.Errorf("CampaignFinish: post-result hook: %w", err)
			}
		}
		return nil
	}()
	return out, err
}

// CampaignAdvance implements store.CampaignStore.
func (s *Store) CampaignAdvance(ctx context.Context, p store.CampaignAdvanceParams) (bool, error) {
	var advanced bool
	err := s.inTx(ctx, func(tx *sql.Tx) (err error) {
		advanced, err = s.campaignAdvanceTx(ctx, tx, p)
		return err
	})
	return advanced, err
}

// CampaignAdvanceMany implements store.CampaignStore.
func (s *Store) CampaignAdvanceMany(ctx context.Context, ps []store.CampaignAdvanceParams) ([]bool, error) {
	if len(ps) > store.MaxBatch {
		return nil, fmt.Errorf("CampaignAdvanceMany: more than %d results", store.MaxBatch)
	}
	return batchInTx(ctx, s, ps, func(tx *sql.Tx, i int, p store.CampaignAdvanceParams) (bool, error) {
		ok, err := s.campaignAdvanceTx(ctx, tx, p)
		if err != nil {
			return ok, fmt.Errorf("result %d (command %s): %w", i, p.CommandID, err)
		}
		return ok, nil
	})
}

// campaignAdvanceTx is one CampaignAdvance inside tx.
func (s *Store) campaignAdvanceTx(ctx context.Context, tx *sql.Tx, p store.CampaignAdvanceParams) (bool, error) {
	c, err := s.commandOne(ctx, tx, "CampaignCommandGetForUpdate", p.CommandID)
	if err != nil {
		return false, err
	}
	if !c.Status.Terminal() || c.Revision != p.Revision {
		return false, nil
	}
	e, err := s.executionOne(ctx, tx, "CampaignExecutionGetForUpdate", c.ExecutionID)
	if err != nil {
		return false, err
	}
	if e.Status != store.ExecutionRunning || e.CurrentIndex != c.ActionIndex {
		return false, nil
	}
	status, index := p.FinalStatus, e.CurrentIndex
	if p.Next != nil {
		if p.Next.ExecutionID != e.ExecutionID || p.Next.ActionIndex <= c.ActionIndex {
			return false, fmt.Errorf("CampaignAdvance: next command %q is not a later step of %s", p.Next.CommandID, e.ExecutionID)
		}
		status, index = store.ExecutionRunning, p.Next.ActionIndex
	} else if status != store.ExecutionCompleted && status != store.ExecutionCancelled {
		return false, fmt.Errorf("CampaignAdvance: final status %q", status)
	}
	if err := s.execOne(ctx, tx, "CampaignExecutionUpdate", sql.Named("Status", string(status)), sql.Named("CurrentIndex", index),
		sql.Named("Now", s.tm(p.Now)), sql.Named("Id", e.ID), sql.Named("Version", e.Version)); err != nil {
		return false, err
	}
	if p.Next != nil {
		if err := s.insertCommand(ctx, tx, *p.Next, p.Now); err != nil {
			return false, err
		}
	}
	if err := s.outboxInsertAll(ctx, tx, p.Now, p.Outbox); err != nil {
		return false, err
	}
	return true, nil
}

// CampaignListUnknown implements store.CampaignStore.
func (s *Store) CampaignListUnknown(ctx context.Context, bu, campaignID string, afterID int64, limit int) ([]store.CampaignCommand, error) {
	return queryPage(ctx, s, "CampaignListUnknown", limit, s.scanCommand, sql.Named("BusinessUnitId", bu), sql.Named("CampaignId", campaignID), sql.Named("AfterId", afterID), sql.Named("Limit", limit))
}

// CampaignResolve implements store.CampaignStore.
func (s *Store) CampaignResolve(ctx context.Context, p store.CampaignResolveParams) (store.CampaignCommand, error) {
	if p.Status != store.CommandSucceeded && p.Status != store.CommandFailed {
		return store.CampaignCommand{}, fmt.Errorf("CampaignResolve: status must be SUCCEEDED or FAILED, not %q", p.Status)
	}
	if p.Operator == "" {
		return store.CampaignCommand{}, errors.New("CampaignResolve: operator is required")
	}
	var out store.CampaignCommand
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := s.commandOne(ctx, tx, "CampaignCommandGetForUpdate", p.CommandID)
		if err != nil {
			return err
		}
		if cur.BusinessUnitID != p.BusinessUnitID {
			return store.ErrNotFound
		}
		if cur.Status != store.CommandUnknown || cur.NextAttemptOn != nil {
			return fmt.Errorf("%s CampaignResolve: command is %s: %w", s.d.Name, cur.Status, store.ErrConflict)
		}
		if cur.Version != p.ExpectedVersion {
			return fmt.Errorf("%s CampaignResolve: %w", s.d.Name, store.ErrLeaseLost)
		}
		next := cur
		next.Status = p.Status
		next.ResolvedBy = p.Operator
		next.ResolutionReason = p.Reason
		if p.ProviderRef != "" {
			next.ProviderRef = p.ProviderRef
		}
		out, err = s.writeCommand(ctx, tx, cur, next, p.Now)
		if err != nil {
			return err
		}
		if err := s.outboxInsertAll(ctx, tx, p.Now, p.Outbox); err != nil {
			return err
		}
		return nil
	})
	return out, err
}

// CampaignFactApply implements store.CampaignStore.
func (s *Store) CampaignFactApply(ctx context.Context, facts []store.CampaignActionOutcomeEvent, now time.Time) (store.DeliveryFactApplyResult, error) {
	if len(facts) > store.MaxBatch {
		return store.DeliveryFactApplyResult{}, fmt.Errorf("CampaignFactApply: more than %d facts", store.MaxBatch)
	}
	// One lock order for every batch: by command, its highest revision first (the order
	// AttributeFlushDeltas uses). Two batches applied at once then never hold one command's
	// lock each while waiting for the other's (a deadlock SQL Server would end by killing
	// one); the end state is the arrival order's, since the highest revision wins either way.
	facts = slices.Clone(facts)
	slices.SortStableFunc(facts, func(a, b store.CampaignActionOutcomeEvent) int {
		return cmp.Or(cmp.Compare(a.CommandID, b.CommandID), cmp.Compare(b.Revision, a.Revision))
	})
	var res store.DeliveryFactApplyResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res = store.DeliveryFactApplyResult{}
		var newest time.Time
		for _, f := range facts {
			var rev int64
			// A locking read (CampaignProjectionRevisionForUpdate): two projectors of one
			// command serialise here, so the second finds the first one's row and updates it
			// instead of both inserting (SQL Server 2627 on the primary key).
			err := s.queryRow(ctx, tx, "CampaignProjectionRevisionForUpdate", sql.Named("CommandId", f.CommandID)).Scan(&rev)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				if _, err := s.exec(ctx, tx, "CampaignProjectionInsert", sql.Named("CommandId", f.CommandID), sql.Named("BusinessUnitId", f.BusinessUnitID),
					sql.Named("CampaignId", f.CampaignID), sql.Named("RunId", f.RunID), sql.Named("RecipientId", f.RecipientID),
					sql.Named("LocalDate", f.LocalDate), sql.Named("Status", string(f.Status)),
					sql.Named("Revision", f.Revision)); err != nil {
					return fmt.Errorf("%s CampaignProjectionInsert: %w", s.d.Name, err)
				}
				res.Applied++
			case err != nil:
				return fmt.Errorf("%s CampaignProjectionRevisionForUpdate: %w", s.d.Name, err)
			case f.Revision <= rev:
				res.Stale++
				continue
			default:
				if _, err := s.exec(ctx, tx, "CampaignProjectionUpdate", sql.Named("Status", string(f.Status)), sql.Named("Revision", f.Revision),
					sql.Named("CommandId", f.CommandID)); err != nil {
					return fmt.Errorf("%s CampaignProjectionUpdate: %w", s.d.Name, err)
				}
				res.Applied++
			}
			if f.OccurredOn.After(newest) {
				newest = f.OccurredOn
			}
		}
		if !newest.IsZero() {
			if _, err := s.exec(ctx, tx, "CampaignProjectionSetFreshTo", sql.Named("FreshTo", s.tm(newest))); err != nil {
				return fmt.Errorf("%s CampaignProjectionSetFreshTo: %w", s.d.Name, err)
			}
		}
		return nil
	})
	return res, err
}

// CampaignCountsByDay implements store.CampaignStore.
func (s *Store) CampaignCountsByDay(ctx context.Context, p store.CampaignCountsParams) (store.CampaignCounts, error) {
	rows, err := queryAll(ctx, s, nil, "CampaignCountsByDay", scanDayStatusCount, sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("CampaignId", p.CampaignID), sql.Named("FromDate", p.From), sql.Named("ToDate", p.To))
	if err != nil {
		return store.CampaignCounts{}, err
	}
	out := store.CampaignCounts{Days: []store.CampaignDayCounts{}}
	byDay := map[string]int{}
	for _, r := range rows {
		i, ok := byDay[r.day]
		if !ok {
			i = len(out.Days)
			byDay[r.day] = i
			out.Days = append(out.Days, store.CampaignDayCounts{LocalDate: r.day, ByStatus: map[string]int{}})
		}
		out.Days[i].ByStatus[r.status] = r.n
	}
	sort.Slice(out.Days, func(i, j int) bool { return out.Days[i].LocalDate < out.Days[j].LocalDate })
	out.FreshTo, err = s.projectionFreshTo(ctx, "CampaignProjectionFreshTo")
	return out, err
}

// CampaignMetricsRead implements store.CampaignStore.
func (s *Store) CampaignMetricsRead(ctx context.Context, businessUnitID string, now time.Time) (store.CampaignMetrics, error) {
	var m store.CampaignMetrics
	if err := s.queryRow(ctx, nil, "CampaignMetricsCommands", sql.Named("Now", s.tm(now)), sql.Named("BusinessUnitId", businessUnitID)).Scan(&m.Waiting, &m.Unknown, &m.PastLease); err != nil {
		return m, fmt.Errorf("%s CampaignMetricsCommands: %w", s.d.Name, err)
	}
	if err := s.queryRow(ctx, nil, "CampaignMetricsOutbox").Scan(&m.OutboxUnsent, s.nt(&m.OutboxOldestOn)); err != nil {
		return m, fmt.Errorf("%s CampaignMetricsOutbox: %w", s.d.Name, err)
	}
	return m, nil
}

// CampaignNextWakeUp implements store.CampaignStore.
func (s *Store) CampaignNextWakeUp(ctx context.Context) (*time.Time, error) {
	return s.nextWakeUp(ctx, "CampaignNextWakeUp")
}

// OutboxClaim implements store.OutboxLeaseStore: in one transaction, claims serialized
// (OutboxClaimLock), the ended leases dropped (OutboxLeaseExpire), the batch read
// (OutboxClaim: unpublished rows no live lease holds, RetryAt come, oldest first), and one
// lease written over its Id range (OutboxLeaseInsert): the rows themselves are not written.
// Each returned message carries the claim's token. At most the dialect's MaxClaim messages
// come back, whatever p.Limit asks (claimSize): the batch is one locking read.
func (s *Store) OutboxClaim(ctx context.Context, p store.OutboxClaimParams) ([]store.OutboxMessage, error) {
	if err := checkClaim("OutboxClaim", p.Limit, p.Lease); err != nil {
		return nil, err
	}
	skip, err := p.SkipList()
	if err != nil {
		return nil, err
	}
	var skipped any // NULL in the lease: nothing left out
	query := "OutboxClaim"
	switch {
	case p.Destination != "":
		// The lease holds only this destination's rows in its range ("+|name|").
		skipped, query = "+|"+p.Destination+"|", "OutboxClaimDestination"
	case skip != "":
		skipped = skip
	}
	before := p.BeforeID
	if before <= 0 {
		before = math.MaxInt64
	}
	token := uuid.NewString()
	now := s.tm(p.Now)
	var out []store.OutboxMessage
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		out = nil // a retried transaction starts over
		if _, err := s.exec(ctx, tx, "OutboxClaimLock"); err != nil {
			return fmt.Errorf("%s OutboxClaimLock: %w", s.d.Name, err)
		}
		if _, err := s.exec(ctx, tx, "OutboxLeaseExpire", sql.Named("Now", now)); err != nil {
			return fmt.Errorf("%s OutboxLeaseExpire: %w", s.d.Name, err)
		}
		var err error
		out, err = queryAll(ctx, s, tx, query, func(r rowScanner) (store.OutboxMessage, error) {
			m := store.OutboxMessage{ClaimToken: token}
			err := r.Scan(&m.ID, &m.MessageID, &m.Destination, ns(&m.SessionID), &m.Body, &m.Envelope, s.t(&m.CreatedOn), s.nt(&m.PublishedOn), &m.Attempts, ns(&m.TraceParent))
			return m, err
		}, sql.Named("Now", now), sql.Named("Limit", s.claimSize(p.Limit)), sql.Named("AfterId", max(p.AfterID, 0)), sql.Named("BeforeId", before),
			sql.Named("Skip", skip), sql.Named("Destination", p.Destination))
		if err != nil || len(out) == 0 {
			return err
		}
		if _, err := s.exec(ctx, tx, "OutboxLeaseInsert", sql.Named("ClaimToken", token), sql.Named("FirstId", out[0].ID),
			sql.Named("LastId", out[len(out)-1].ID), sql.Named("LeaseUntil", s.tm(p.Now.Add(p.Lease))), sql.Named("SkipDestinations", skipped)); err != nil {
			return fmt.Errorf("%s OutboxLeaseInsert: %w", s.d.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// OutboxRetryLater implements store.OutboxLeaseStore.
func (s *Store) OutboxRetryLater(ctx context.Context, id int64, token string, retryAt time.Time) error {
	if _, err := s.exec(ctx, nil, "OutboxRetryLater", sql.Named("RetryAt", s.tm(retryAt)), sql.Named("Id", id), sql.Named("ClaimToken", token)); err != nil {
		return fmt.Errorf("%s OutboxRetryLater: %w", s.d.Name, err)
	}
	return nil
}

// OutboxRelease implements store.OutboxLeaseStore: the claim's lease ends before the
// smallest of ids (OutboxLeaseShrink), or is deleted without ids (OutboxLeaseDelete).
func (s *Store) OutboxRelease(ctx context.Context, ids []int64, token string) error {
	if len(ids) > store.MaxBatch {
		return fmt.Errorf("OutboxRelease: more than %d ids", store.MaxBatch)
	}
	if len(ids) == 0 {
		if _, err := s.exec(ctx, nil, "OutboxLeaseDelete", sql.Named("ClaimToken", token)); err != nil {
			return fmt.Errorf("%s OutboxLeaseDelete: %w", s.d.Name, err)
		}
		return nil
	}
	if _, err := s.exec(ctx, nil, "OutboxLeaseShrink", sql.Named("FromId", slices.Min(ids)), sql.Named("ClaimToken", token)); err != nil {
		return fmt.Errorf("%s OutboxLeaseShrink: %w", s.d.Name, err)
	}
	return nil
}

// OutboxPurge implements store.OutboxLeaseStore.
func (s *Store) OutboxPurge(ctx context.Context, p store.OutboxPurgeParams) (store.OutboxPurgeResult, error) {
	if err := checkLimit("OutboxPurge", p.Limit); err != nil {
		return store.OutboxPurgeResult{}, err
	}
	var out store.OutboxPurgeResult
	del := func(name string, before time.Time) (int, error) {
		if before.IsZero() {
			return 0, nil
		}
		res, err := s.exec(ctx, nil, name, sql.Named("Before", s.tm(before)), sql.Named("Limit", p.Limit))
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", s.d.Name, name, err)
		}
		n, err := res.RowsAffected()
		return int(n), err
	}
	var err error
	if out.Outbox, err = del("OutboxPurgePublished", p.PublishedBefore); err != nil {
		return out, err
	}
	out.ProcessedEvents, err = del("ProcessedEventPurge", p.ProcessedBefore)
	return out, err
}

var _ store.OutboxBacklogReader = (*Store)(nil)

// OutboxBacklog implements store.OutboxBacklogReader (OutboxBacklogCount: one walk of the
// partial index of unpublished rows, no table reads).
func (s *Store) OutboxBacklog(ctx context.Context) (int, error) {
	var n int
	if err := s.queryRow(ctx, nil, "OutboxBacklogCount").Scan(&n); err != nil {
		return 0, fmt.Errorf("%s OutboxBacklogCount: %w", s.d.Name, err)
	}
	return n, nil
}
