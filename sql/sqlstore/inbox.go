package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"github.com/automation-platform/automation/shared/store"
)

var _ store.InboxStore = (*Store)(nil)

func (s *Store) scanInbox(r rowScanner) (store.InboxMessage, error) {
	var m store.InboxMessage
	err := r.Scan(&m.ID, &m.BusinessUnitID, &m.RecipientID, &m.Seq, &m.DeliveryKey, &m.Template, &m.Subject, &m.Text, &m.HTML,
		ns(&m.PayloadJSON), s.t(&m.CreatedOn), s.nt(&m.ReadOn), &m.Version)
	return m, err
}

func (s *Store) inboxOne(ctx context.Context, tx *sql.Tx, name string, args ...any) (store.InboxMessage, error) {
	m, err := s.scanInbox(s.queryRow(ctx, tx, name, args...))
	return m, s.oneErr(name, err)
}

func (s *Store) inboxGet(ctx context.Context, tx *sql.Tx, bu, recipient string, seq int64) (store.InboxMessage, error) {
	return s.inboxOne(ctx, tx, "InboxGet", sql.Named("BusinessUnitId", bu), sql.Named("RecipientId", recipient), sql.Named("Seq", seq))
}

// InboxInsert implements store.InboxStore: insert unless the delivery key exists, then read
// the stored row, in one transaction.
func (s *Store) InboxInsert(ctx context.Context, p store.InboxInsertParams) (store.InboxInsertResult, error) {
	if p.BusinessUnitID == "" || p.RecipientID == "" || p.DeliveryKey == "" {
		return store.InboxInsertResult{}, fmt.Errorf("%s InboxInsert: business unit, recipient and delivery key are required", s.d.Name)
	}
	var out store.InboxInsertResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = store.InboxInsertResult{}
		n, err := s.execCount(ctx, tx, "InboxInsert", sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("RecipientId", p.RecipientID),
			sql.Named("DeliveryKey", p.DeliveryKey), sql.Named("Template", p.Template), sql.Named("Subject", p.Subject),
			sql.Named("TextBody", p.Text), sql.Named("HtmlBody", p.HTML), sql.Named("PayloadJson", nstr(p.PayloadJSON)),
			sql.Named("CreatedOn", s.tm(p.Now)))
		if err != nil {
			return err
		}
		m, err := s.inboxOne(ctx, tx, "InboxGetByDeliveryKey", sql.Named("DeliveryKey", p.DeliveryKey))
		if err != nil {
			return err
		}
		if m.BusinessUnitID != p.BusinessUnitID || m.RecipientID != p.RecipientID {
			return fmt.Errorf("%s InboxInsert: delivery key %q is stored for another recipient: %w", s.d.Name, p.DeliveryKey, store.ErrConflict)
		}
		out = store.InboxInsertResult{Message: m, Inserted: n == 1}
		return nil
	})
	return out, err
}

// InboxList implements store.InboxStore.
func (s *Store) InboxList(ctx context.Context, p store.InboxListParams) ([]store.InboxMessage, error) {
	if err := checkLimit("InboxList", p.Limit); err != nil {
		return nil, err
	}
	state := p.State
	switch state {
	case "":
		state = store.InboxAll
	case store.InboxAll, store.InboxUnread, store.InboxRead:
	default:
		return nil, fmt.Errorf("%s InboxList: unknown state %q", s.d.Name, state)
	}
	before := p.BeforeSeq
	if before <= 0 {
		before = math.MaxInt64
	}
	return queryAll(ctx, s, nil, "InboxList", s.scanInbox, sql.Named("BusinessUnitId", p.BusinessUnitID),
		sql.Named("RecipientId", p.RecipientID), sql.Named("BeforeSeq", before), sql.Named("State", string(state)), sql.Named("Limit", p.Limit))
}

// InboxListAfter implements store.InboxStore.
func (s *Store) InboxListAfter(ctx context.Context, p store.InboxListAfterParams) ([]store.InboxMessage, error) {
	return queryPage(ctx, s, "InboxListAfter", p.Limit, s.scanInbox, sql.Named("BusinessUnitId", p.BusinessUnitID),
		sql.Named("RecipientId", p.RecipientID), sql.Named("AfterSeq", max(p.AfterSeq, 0)), sql.Named("Limit", p.Limit))
}

// InboxGet implements store.InboxStore.
func (s *Store) InboxGet(ctx context.Context, businessUnitID, recipientID string, seq int64) (store.InboxMessage, error) {
	return s.inboxGet(ctx, nil, businessUnitID, recipientID, seq)
}

// InboxMarkRead implements store.InboxStore: the guarded update, then the row, in one
// transaction; no row changed is told apart by reading it.
func (s *Store) InboxMarkRead(ctx context.Context, p store.InboxMarkReadParams) (store.InboxMessage, error) {
	var out store.InboxMessage
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		n, err := s.execCount(ctx, tx, "InboxMarkRead", sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("RecipientId", p.RecipientID),
			sql.Named("Seq", p.Seq), sql.Named("Version", p.Version), sql.Named("Now", s.tm(p.Now)))
		if err != nil {
			return err
		}
		m, err := s.inboxGet(ctx, tx, p.BusinessUnitID, p.RecipientID, p.Seq)
		if err != nil {
			return err
		}
		// Not updated: a message read before at the caller's Version is the answer as it is;
		// any other Version is stale.
		if n != 1 && (m.ReadOn == nil || m.Version != p.Version) {
			return fmt.Errorf("%s InboxMarkRead: %w", s.d.Name, store.ErrLeaseLost)
		}
		out = m
		return nil
	})
	return out, err
}
