package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/automation-platform/automation/shared/store"
)

var _ store.GatewayStore = (*Store)(nil)

func (s *Store) scanRegistry(r rowScanner) (store.EventRegistryEntry, error) {
	var e store.EventRegistryEntry
	err := r.Scan(&e.Seq, &e.EventType, &e.Version, &e.DefinitionJSON, &e.Operator, s.t(&e.CreatedOn))
	return e, err
}

// EventRegistrySave implements store.GatewayStore in one transaction: read the latest
// version (locked on SQL Server), check it against ExpectedVersion, insert the next.
func (s *Store) EventRegistrySave(ctx context.Context, p store.EventRegistrySaveParams) (store.EventRegistryEntry, error) {
	if p.EventType == "" || p.DefinitionJSON == "" || p.Operator == "" || p.ExpectedVersion < 0 {
		return store.EventRegistryEntry{}, fmt.Errorf("%s EventRegistrySave: event type, definition and operator are required", s.d.Name)
	}
	var out store.EventRegistryEntry
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var latest int64
		if err := s.queryRow(ctx, tx, "EventRegistryLatestVersion", sql.Named("EventType", p.EventType)).Scan(&latest); err != nil {
			return fmt.Errorf("%s EventRegistryLatestVersion: %w", s.d.Name, err)
		}
		switch {
		case p.ExpectedVersion == 0 && latest > 0:
			return fmt.Errorf("%s EventRegistrySave %s: version %d exists: %w", s.d.Name, p.EventType, latest, store.ErrConflict)
		case p.ExpectedVersion > 0 && latest == 0:
			return fmt.Errorf("%s EventRegistrySave %s: %w", s.d.Name, p.EventType, store.ErrNotFound)
		case p.ExpectedVersion > 0 && latest != p.ExpectedVersion:
			return fmt.Errorf("%s EventRegistrySave %s: latest is %d, not %d: %w", s.d.Name, p.EventType, latest, p.ExpectedVersion, store.ErrLeaseLost)
		}
		e, err := s.scanRegistry(s.queryRow(ctx, tx, "EventRegistryInsert", sql.Named("EventType", p.EventType),
			sql.Named("Version", latest+1), sql.Named("DefinitionJson", p.DefinitionJSON), sql.Named("Operator", p.Operator),
			sql.Named("Now", s.tm(p.Now))))
		if err != nil {
			return fmt.Errorf("%s EventRegistryInsert: %w", s.d.Name, err)
		}
		out = e
		return nil
	})
	return out, err
}

// EventRegistryGet implements store.GatewayStore.
func (s *Store) EventRegistryGet(ctx context.Context, p store.EventRegistryGetParams) (store.EventRegistryEntry, error) {
	var row *sql.Row
	if p.Version == 0 {
		row = s.queryRow(ctx, nil, "EventRegistryGetLatest", sql.Named("EventType", p.EventType))
	} else {
		row = s.queryRow(ctx, nil, "EventRegistryGet", sql.Named("EventType", p.EventType), sql.Named("Version", p.Version))
	}
	e, err := s.scanRegistry(row)
	return e, s.oneErr("EventRegistryGet", err)
}

// EventRegistryListLatest implements store.GatewayStore.
func (s *Store) EventRegistryListLatest(ctx context.Context) ([]store.EventRegistryEntry, error) {
	return queryAll(ctx, s, nil, "EventRegistryListLatest", s.scanRegistry)
}

// EventRegistryListVersions implements store.GatewayStore.
func (s *Store) EventRegistryListVersions(ctx context.Context, eventType string) ([]store.EventRegistryEntry, error) {
	return queryAll(ctx, s, nil, "EventRegistryListVersions", s.scanRegistry, sql.Named("EventType", eventType))
}

// EventRegistryStamp implements store.GatewayStore.
func (s *Store) EventRegistryStamp(ctx context.Context) (int64, error) {
	var n int64
	if err := s.queryRow(ctx, nil, "EventRegistryStamp").Scan(&n); err != nil {
		return 0, fmt.Errorf("%s EventRegistryStamp: %w", s.d.Name, err)
	}
	return n, nil
}

// GatewayEventAccept implements store.GatewayStore: one transaction for the whole list; per
// event, the ledger insert decides duplicate or new, then each outbox row is inserted; an
// outbox MessageId already taken undoes this event's rows (MessageIdTaken) and the others
// go on.
func (s *Store) GatewayEventAccept(ctx context.Context, p store.GatewayEventAcceptParams) ([]store.GatewayAcceptOutcome, error) {
	if len(p.Events) > store.MaxBatch {
		return nil, fmt.Errorf("GatewayEventAccept: more than %d events", store.MaxBatch)
	}
	for _, e := range p.Events {
		if e.Source == "" || e.ID == "" || len(e.Outbox) > 8 {
			return nil, fmt.Errorf("GatewayEventAccept: an event needs a source and an id, and has at most 8 outbox rows")
		}
	}
	var out []store.GatewayAcceptOutcome
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = make([]store.GatewayAcceptOutcome, len(p.Events))
		now := s.tm(p.Now)
		// The two statements of every event are bound to the transaction once, not per event.
		insEvent, err := s.stmt(ctx, tx, "GatewayEventInsert")
		if err != nil {
			return err
		}
		insOutbox, err := s.stmt(ctx, tx, "OutboxInsert")
		if err != nil {
			return err
		}
		for i, e := range p.Events {
			res, err := insEvent.ExecContext(ctx, sql.Named("EventSource", e.Source), sql.Named("EventId", e.ID),
				sql.Named("EventType", e.Type), sql.Named("BusinessUnitId", e.BusinessUnitID), sql.Named("CustomerId", e.CustomerID),
				sql.Named("RegistryVersion", e.RegistryVersion), sql.Named("Routes", e.Routes), sql.Named("Now", now))
			if err != nil {
				return fmt.Errorf("%s GatewayEventInsert: %w", s.d.Name, err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return fmt.Errorf("%s GatewayEventInsert: %w", s.d.Name, err)
			} else if n == 0 {
				out[i] = store.GatewayDuplicate
				continue
			}
			out[i] = store.GatewayAccepted
			var written []string
			for _, m := range e.Outbox {
				res, err := insOutbox.ExecContext(ctx, sql.Named("MessageId", m.MessageID), sql.Named("Destination", m.Destination),
					sql.Named("SessionId", nstr(m.SessionID)), sql.Named("Body", m.Body), sql.Named("Envelope", boolInt(m.Envelope)), sql.Named("Now", now),
					sql.Named("TraceParent", traceParent(ctx, m)))
				if err != nil {
					return fmt.Errorf("%s OutboxInsert: %w", s.d.Name, err)
				}
				n, err := res.RowsAffected()
				if err != nil {
					return fmt.Errorf("%s OutboxInsert: %w", s.d.Name, err)
				}
				if n == 1 {
					written = append(written, m.MessageID)
					s.noteOutbox(tx, 1)
					continue
				}
				out[i] = store.GatewayMessageIDTaken
				break
			}
			if out[i] != store.GatewayMessageIDTaken {
				continue
			}
			for _, id := range written {
				if _, err := s.exec(ctx, tx, "GatewayOutboxDelete", sql.Named("MessageId", id)); err != nil {
					return fmt.Errorf("%s GatewayOutboxDelete: %w", s.d.Name, err)
				}
			}
			if _, err := s.exec(ctx, tx, "GatewayEventDelete", sql.Named("EventSource", e.Source), sql.Named("EventId", e.ID)); err != nil {
				return fmt.Errorf("%s GatewayEventDelete: %w", s.d.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// OutboxLagGet implements store.GatewayStore: one count per destination over the partial
// index of unpublished rows.
func (s *Store) OutboxLagGet(ctx context.Context, destinations []string) ([]store.OutboxLag, error) {
	if len(destinations) > 20 {
		return nil, errors.New("OutboxLagGet: at most 20 destinations")
	}
	out := make([]store.OutboxLag, 0, len(destinations))
	for _, d := range destinations {
		l := store.OutboxLag{Destination: d}
		if err := s.queryRow(ctx, nil, "OutboxLagGet", sql.Named("Destination", d)).Scan(&l.Unpublished, s.nt(&l.OldestOn)); err != nil {
			return nil, fmt.Errorf("%s OutboxLagGet: %w", s.d.Name, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// NotificationEnqueue implements store.NotificationEnqueuer with the same writes as a
// completed scheduler row's hand-off, without the row.
func (s *Store) NotificationEnqueue(ctx context.Context, p store.NotificationEnqueueParams) error {
	if len(p.Deliveries) > store.MaxBatch || len(p.Outbox) > store.MaxBatch {
		return fmt.Errorf("NotificationEnqueue: more than %d deliveries or messages", store.MaxBatch)
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		return s.handOff(ctx, tx, []store.SchedulerCompleteParams{{Now: p.Now, Deliveries: p.Deliveries, Outbox: p.Outbox}})
	})
}
