package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

var _ store.AttributeStore = (*Store)(nil)

func (s *Store) scanAttribute(r rowScanner) (store.AttributeRow, error) {
	var a store.AttributeRow
	err := r.Scan(&a.BusinessUnitID, &a.EntityType, &a.EntityID, &a.AttributeCode, &a.ValueType, &a.ValueText, &a.OrderKey,
		&a.Period, &a.PeriodRule, s.t(&a.LastEventOn), s.t(&a.UpdatedOn), &a.Version)
	return a, err
}

func entityArgs(e store.AttributeEntity) []any {
	return []any{sql.Named("BusinessUnitId", e.BusinessUnitID), sql.Named("EntityType", e.EntityType), sql.Named("EntityId", e.EntityID)}
}

func checkEntity(e store.AttributeEntity) error {
	if e.BusinessUnitID == "" || e.EntityType == "" || e.EntityID == "" {
		return fmt.Errorf("attribute entity %+v: business unit, type and id are required", e)
	}
	return nil
}

// AttributeApply implements store.AttributeStore: processed rows, load, Decide, guarded
// writes, deltas and outbox, all in one transaction.
func (s *Store) AttributeApply(ctx context.Context, p store.AttributeApplyParams) (store.AttributeApplyOutcome, error) {
	if err := s.checkAttributeApply(p); err != nil {
		return "", err
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out, err := s.attributeApplyTx(ctx, tx, p)
		if err == nil && out == store.AttributeDuplicate {
			return errDuplicateEvent // nothing was written: roll back
		}
		return err
	})
	if errors.Is(err, errDuplicateEvent) {
		return store.AttributeDuplicate, nil
	}
	if err != nil {
		return "", err
	}
	return store.AttributeApplied, nil
}

// AttributeApplyBatch implements store.AttributeStore: each event as AttributeApply would
// apply it, in order, all in one transaction; the first error rolls back the whole batch.
func (s *Store) AttributeApplyBatch(ctx context.Context, ps []store.AttributeApplyParams) ([]store.AttributeApplyOutcome, error) {
	if len(ps) == 0 || len(ps) > store.MaxBatch {
		return nil, fmt.Errorf("%s AttributeApplyBatch: 1..%d events, got %d", s.d.Name, store.MaxBatch, len(ps))
	}
	for _, p := range ps {
		if err := s.checkAttributeApply(p); err != nil {
			return nil, err
		}
	}
	outs := make([]store.AttributeApplyOutcome, len(ps))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for i, p := range ps {
			out, err := s.attributeApplyTx(ctx, tx, p)
			if err != nil {
				return fmt.Errorf("%s AttributeApplyBatch: event %d (%s): %w", s.d.Name, i, p.EventID, err)
			}
			outs[i] = out
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return outs, nil
}

func (s *Store) checkAttributeApply(p store.AttributeApplyParams) error {
	if p.EventID == "" || len(p.Entities) == 0 || len(p.Entities) > store.MaxBatch || p.Decide == nil {
		return fmt.Errorf("%s AttributeApply: an event id, 1..%d entities and Decide are required", s.d.Name, store.MaxBatch)
	}
	for _, e := range p.Entities {
		if err := checkEntity(e); err != nil {
			return err
		}
	}
	return nil
}

// attributeApplyTx applies one event inside tx: its entities' processed rows, load, Decide,
// guarded writes, deltas, AfterWrite and outbox. An event whose first entity had processed
// it is AttributeDuplicate with nothing written; one whose later entity had (its earlier
// entities' processed rows already inserted) is errDuplicateEvent, which must roll tx back.
func (s *Store) attributeApplyTx(ctx context.Context, tx *sql.Tx, p store.AttributeApplyParams) (store.AttributeApplyOutcome, error) {
	rows := make(map[store.AttributeEntity]map[string]store.AttributeRow, len(p.Entities))
	for i, e := range p.Entities {
		res, err := s.exec(ctx, tx, "AttributeProcessedInsert", append(entityArgs(e), sql.Named("EventId", p.EventID), sql.Named("Now", s.tm(p.Now)))...)
		if err != nil {
			return "", fmt.Errorf("%s AttributeProcessedInsert: %w", s.d.Name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if i == 0 {
				return store.AttributeDuplicate, nil
			}
			return "", errDuplicateEvent
		}
		list, err := queryAll(ctx, s, tx, "AttributeListEntity", s.scanAttribute, entityArgs(e)...)
		if err != nil {
			return "", err
		}
		m := make(map[string]store.AttributeRow, len(list))
		for _, r := range list {
			m[r.AttributeCode] = r
		}
		rows[e] = m
	}
	dec, err := p.Decide(rows)
	if err != nil {
		return "", err
	}
	for _, r := range dec.Rows {
		// The stored row's OrderKey, when the write updates the version read: unchanged, the
		// update leaves the ranking index alone (AttributeUpdateKeepOrder).
		keep := false
		if old, ok := rows[r.AttributeEntity][r.AttributeCode]; ok && r.Version > 0 && old.Version == r.Version && old.OrderKey == r.OrderKey {
			keep = true
		}
		if err := s.attributeWrite(ctx, tx, p.Now, r, keep); err != nil {
			return "", err
		}
	}
	for _, d := range dec.Deltas {
		if err := checkEntity(d.AttributeEntity); err != nil {
			return "", err
		}
		if _, err := s.exec(ctx, tx, "AttributeDeltaInsert", append(entityArgs(d.AttributeEntity), sql.Named("AttributeCode", d.AttributeCode),
			sql.Named("Micros", d.Micros), sql.Named("EventId", p.EventID), sql.Named("Now", s.tm(p.Now)))...); err != nil {
			return "", fmt.Errorf("%s AttributeDeltaInsert: %w", s.d.Name, err)
		}
	}
	if p.AfterWrite != nil {
		if err := p.AfterWrite(ctx); err != nil {
			return "", err
		}
	}
	if err := s.outboxInsertAll(ctx, tx, p.Now, dec.Outbox); err != nil {
		return "", err
	}
	return store.AttributeApplied, nil
}

// errDuplicateEvent rolls back the transaction of an event an entity processed before.
var errDuplicateEvent = errors.New("attribute event processed before")

// attributeWrite inserts (Version 0) or updates (guarded by Version) one row; keepOrder
// says the stored row of that Version has r's OrderKey already, so the update leaves the
// ranking index alone (AttributeUpdateKeepOrder: docs/performance.md, "What tipped W6").
func (s *Store) attributeWrite(ctx context.Context, tx *sql.Tx, now time.Time, r store.AttributeRow, keepOrder bool) error {
	if err := checkEntity(r.AttributeEntity); err != nil {
		return err
	}
	args := append(entityArgs(r.AttributeEntity), sql.Named("AttributeCode", r.AttributeCode), sql.Named("ValueType", r.ValueType),
		sql.Named("ValueText", r.ValueText), sql.Named("OrderKey", r.OrderKey), sql.Named("Period", r.Period), sql.Named("PeriodRule", r.PeriodRule),
		sql.Named("LastEventOn", s.tm(r.LastEventOn)), sql.Named("Now", s.tm(now)))
	update := "AttributeUpdate"
	if keepOrder {
		update = "AttributeUpdateKeepOrder"
	}
	name, args := versionedSave("AttributeInsert", update, r.Version, args)
	res, err := s.exec(ctx, tx, name, args...)
	if err != nil {
		return fmt.Errorf("%s %s: %w", s.d.Name, name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%s %s %s/%s/%s: %w", s.d.Name, name, r.EntityType, r.EntityID, r.AttributeCode, store.ErrLeaseLost)
	}
	return nil
}

// AttributeList implements store.AttributeStore.
func (s *Store) AttributeList(ctx context.Context, e store.AttributeEntity) ([]store.AttributeRow, error) {
	return queryAll(ctx, s, nil, "AttributeListEntity", s.scanAttribute, entityArgs(e)...)
}

// AttributeDeltaSums implements store.AttributeStore.
func (s *Store) AttributeDeltaSums(ctx context.Context, e store.AttributeEntity) (map[string]int64, error) {
	type sum struct {
		code string
		n    int64
	}
	list, err := queryAll(ctx, s, nil, "AttributeDeltaSums", func(r rowScanner) (sum, error) {
		var x sum
		return x, r.Scan(&x.code, &x.n)
	}, entityArgs(e)...)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(list))
	for _, x := range list {
		out[x.code] = x.n
	}
	return out, nil
}

// AttributeTop implements store.AttributeStore.
func (s *Store) AttributeTop(ctx context.Context, p store.AttributeTopParams) ([]store.AttributeRow, error) {
	return queryPage(ctx, s, "AttributeTop", p.Limit, s.scanAttribute, sql.Named("BusinessUnitId", p.BusinessUnitID),
		sql.Named("EntityType", p.EntityType), sql.Named("AttributeCode", p.AttributeCode), sql.Named("Limit", p.Limit))
}

type attributeKey struct {
	store.AttributeEntity
	code string
}

// AttributeProcessedPurge implements store.AttributeStore.
func (s *Store) AttributeProcessedPurge(ctx context.Context, before time.Time, limit int) (int, error) {
	return s.purgeBefore(ctx, "AttributeProcessedPurge", before, limit)
}

// AttributeFlushDeltas implements store.AttributeStore.
func (s *Store) AttributeFlushDeltas(ctx context.Context, now time.Time, limit int,
	fold func(oldText string, micros int64) (string, string, error)) (store.AttributeFlushResult, error) {
	if err := checkLimit("AttributeFlushDeltas", limit); err != nil {
		return store.AttributeFlushResult{}, err
	}
	var out store.AttributeFlushResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = store.AttributeFlushResult{}
		type delta struct {
			id  int64
			key attributeKey
			n   int64
		}
		ds, err := queryAll(ctx, s, tx, "AttributeDeltaOldest", func(r rowScanner) (delta, error) {
			var d delta
			return d, r.Scan(&d.id, &d.key.BusinessUnitID, &d.key.EntityType, &d.key.EntityID, &d.key.code, &d.n)
		}, sql.Named("Limit", limit))
		if err != nil {
			return err
		}
		sums := map[attributeKey]int64{}
		for _, d := range ds {
			sums[d.key] += d.n
		}
		keys := make([]attributeKey, 0, len(sums))
		for k := range sums {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { // a fixed lock order
			a, b := keys[i], keys[j]
			if a.BusinessUnitID != b.BusinessUnitID {
				return a.BusinessUnitID < b.BusinessUnitID
			}
			if a.EntityType != b.EntityType {
				return a.EntityType < b.EntityType
			}
			if a.EntityID != b.EntityID {
				return a.EntityID < b.EntityID
			}
			return a.code < b.code
		})
		for _, k := range keys {
			cur, err := s.scanAttribute(s.queryRow(ctx, tx, "AttributeGet", append(entityArgs(k.AttributeEntity), sql.Named("AttributeCode", k.code))...))
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%s AttributeGet: %w", s.d.Name, err)
			}
			old := ""
			if err == nil {
				if cur.ValueType != "number" {
					return fmt.Errorf("%s AttributeFlushDeltas %s/%s/%s: the counter row holds a %s", s.d.Name, k.EntityType, k.EntityID, k.code, cur.ValueType)
				}
				old = cur.ValueText
			}
			text, orderKey, err := fold(old, sums[k])
			if err != nil {
				return err
			}
			row := store.AttributeRow{AttributeEntity: k.AttributeEntity, AttributeCode: k.code, ValueType: "number", ValueText: text,
				OrderKey: orderKey, Version: cur.Version, LastEventOn: maxTime(cur.LastEventOn, now)}
			if err := s.attributeWrite(ctx, tx, now, row, cur.OrderKey == orderKey); err != nil { // keepOrder counts only for an update (Version > 0: cur was read)
				return err
			}
			out.Counters++
		}
		for _, d := range ds {
			if _, err := s.exec(ctx, tx, "AttributeDeltaDelete", sql.Named("Id", d.id)); err != nil {
				return fmt.Errorf("%s AttributeDeltaDelete: %w", s.d.Name, err)
			}
		}
		out.Deltas = len(ds)
		return nil
	})
	return out, err
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
