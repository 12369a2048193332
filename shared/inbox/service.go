package inbox

import (
	"context"
	"errors"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Page bounds of List.
const (
	DefaultPage = 20
	MaxPage     = 100
)

// Stream defaults (StreamOptions).
const (
	DefaultHeartbeat   = 15 * time.Second
	DefaultMaxLifetime = 5 * time.Minute // under the Functions host's functionTimeout (10 min)
	replayBatch        = 100
	retryStreams       = 5 * time.Second
)

// ErrDropped ends a stream whose subscriber queue overflowed: the client resumes with
// Last-Event-ID (the replay from SQL loses nothing).
var ErrDropped = errors.New("inbox: the stream fell behind and was dropped; reconnect with Last-Event-ID")

// Service reads and marks a recipient's messages and runs live streams.
type Service struct {
	Store  store.InboxStore
	Broker *Broker
	Clock  automation.Clock
}

// ListRequest asks for one page of a recipient's messages, newest first: Seq < BeforeSeq
// (0 = from the newest), State "" = all, Limit 1..MaxPage.
type ListRequest struct {
	BusinessUnitID string
	RecipientID    string
	State          store.InboxState
	BeforeSeq      int64
	Limit          int
}

// Page is a list answer; NextBefore > 0 names the next page's BeforeSeq.
type Page struct {
	Items      []store.InboxMessage
	NextBefore int64
}

// List returns one page. Errors: automation.CodeInvalidInput for a bad recipient id, state
// or limit; store errors.
func (s *Service) List(ctx context.Context, r ListRequest) (Page, error) {
	if err := ValidateRecipientID(r.RecipientID); err != nil {
		return Page{}, automation.Invalid("recipientId", "%s", err.Error())
	}
	switch r.State {
	case "", store.InboxAll, store.InboxUnread, store.InboxRead:
	default:
		return Page{}, automation.Invalid("state", "must be unread, read or all")
	}
	if r.Limit < 1 || r.Limit > MaxPage {
		return Page{}, automation.Invalid("limit", "must be 1..%d", MaxPage)
	}
	items, err := s.Store.InboxList(ctx, store.InboxListParams{BusinessUnitID: r.BusinessUnitID, RecipientID: r.RecipientID,
		State: r.State, BeforeSeq: r.BeforeSeq, Limit: r.Limit + 1})
	if err != nil {
		return Page{}, err
	}
	p := Page{Items: items}
	if len(items) > r.Limit {
		p.Items = items[:r.Limit]
		p.NextBefore = p.Items[r.Limit-1].Seq
	}
	if p.Items == nil {
		p.Items = []store.InboxMessage{}
	}
	return p, nil
}

// MarkRead marks message seq of the recipient read if its Version is still version and
// returns it. Errors: store.ErrNotFound, store.ErrLeaseLost (stale version).
func (s *Service) MarkRead(ctx context.Context, businessUnitID, recipientID string, seq, version int64) (store.InboxMessage, error) {
	if err := ValidateRecipientID(recipientID); err != nil {
		return store.InboxMessage{}, automation.Invalid("recipientId", "%s", err.Error())
	}
	return s.Store.InboxMarkRead(ctx, store.InboxMarkReadParams{BusinessUnitID: businessUnitID, RecipientID: recipientID,
		Seq: seq, Version: version, Now: s.Clock.Now().UTC()})
}

// StreamOptions tune a stream; zero values take the defaults.
type StreamOptions struct {
	// Heartbeat is the interval of heartbeats; before each the stream also reads SQL for
	// messages stored by other instances (their latency bound).
	Heartbeat time.Duration
	// MaxLifetime ends the stream (the client reconnects with Last-Event-ID).
	MaxLifetime time.Duration
}

// Event is what a stream emits: a message, or a heartbeat (Message nil).
type Event struct {
	Message *store.InboxMessage
}

// Stream is one live stream of one recipient, subscribed to the broker from OpenStream on,
// so nothing stored after that is missed by the replay that Run starts with.
type Stream struct {
	s             *Service
	sub           *Subscription
	bu, recipient string
	opts          StreamOptions
}

// OpenStream subscribes a stream. Errors: automation.CodeInvalidInput for a bad recipient
// id; ErrTooManyStreams (automation.RetryAfter) when the instance holds its maximum.
func (s *Service) OpenStream(businessUnitID, recipientID string, o StreamOptions) (*Stream, error) {
	if err := ValidateRecipientID(recipientID); err != nil {
		return nil, automation.Invalid("recipientId", "%s", err.Error())
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.MaxLifetime <= 0 {
		o.MaxLifetime = DefaultMaxLifetime
	}
	sub, err := s.Broker.Subscribe(businessUnitID, recipientID)
	if err != nil {
		return nil, err
	}
	return &Stream{s: s, sub: sub, bu: businessUnitID, recipient: recipientID, opts: o}, nil
}

// Close unsubscribes (idempotent); Run closes too.
func (st *Stream) Close() { st.sub.Close() }

// Run emits every message with Seq > last in Seq order, each once: first those in SQL, then
// live ones as they are published (a gap in Seq is filled from SQL first), with a heartbeat
// every Heartbeat. It returns nil when ctx ends or MaxLifetime passes, ErrDropped when the
// broker dropped the subscription, emit's error, or a store error.
func (st *Stream) Run(ctx context.Context, last int64, emit func(Event) error) error {
	defer st.Close()
	life := time.NewTimer(st.opts.MaxLifetime)
	defer life.Stop()
	beat := time.NewTicker(st.opts.Heartbeat)
	defer beat.Stop()
	catchUp := func() error {
		for {
			ms, err := st.s.Store.InboxListAfter(ctx, store.InboxListAfterParams{BusinessUnitID: st.bu, RecipientID: st.recipient,
				AfterSeq: last, Limit: replayBatch})
			if err != nil {
				return err
			}
			for i := range ms {
				if err := emit(Event{Message: &ms[i]}); err != nil {
					return err
				}
				last = ms[i].Seq
			}
			if len(ms) < replayBatch {
				return nil
			}
		}
	}
	if err := catchUp(); err != nil {
		return ignoreEnd(ctx, err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-life.C:
			return nil
		case <-st.sub.Dropped():
			return ErrDropped
		case m := <-st.sub.C():
			switch {
			case m.Seq <= last: // sent already (replayed, or a resend republished it)
			case m.Seq == last+1:
				if err := emit(Event{Message: &m}); err != nil {
					return ignoreEnd(ctx, err)
				}
				last = m.Seq
			default: // a gap: messages stored by another instance, or published out of order
				if err := catchUp(); err != nil {
					return ignoreEnd(ctx, err)
				}
			}
		case <-beat.C:
			if err := catchUp(); err != nil {
				return ignoreEnd(ctx, err)
			}
			if err := emit(Event{}); err != nil {
				return ignoreEnd(ctx, err)
			}
		}
	}
}

// ignoreEnd turns an error caused by the client going away into nil.
func ignoreEnd(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
