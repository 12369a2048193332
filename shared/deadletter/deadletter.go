package deadletter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sort"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/logmask"
	"github.com/automation-platform/automation/shared/store"
)

// Item is one dead letter as the API shows it.
type Item struct {
	ID             string `json:"id"`
	Destination    string `json:"destination"` // the route: a queue or topic (topology)
	MessageID      string `json:"messageId"`
	SessionID      string `json:"sessionId,omitempty"`
	BusinessUnitID string `json:"businessUnitId,omitempty"` // "" when the body names none
	Reason         string `json:"reason"`
	DeliveryCount  int    `json:"deliveryCount"`
	// DeadLetteredOn is when the bus gave up on it (UTC); absent when the bus does not say.
	DeadLetteredOn *time.Time `json:"deadLetteredOn,omitempty"`
	// Body is the original message when it is JSON; BodyText otherwise (as UTF-8 text).
	// Personal data in it (e-mail addresses, phone numbers) is masked (shared/logmask): the
	// list shows what went wrong, not whom it was about; a requeue sends the original bytes.
	Body     json.RawMessage `json:"body,omitempty"`
	BodyText string          `json:"bodyText,omitempty"`
	// ETag names this dead letter exactly (ETagOf): an action carries the ETag it was
	// read with, so an id that names another dead letter now (the in-process list starts
	// again after a restart) is refused with 412, and a repeated action replays the first.
	ETag string `json:"etag"`
}

// Count is one route's dead letters: Count listed now, Evicted dropped from a bounded
// list (the in-process bus keeps the newest 1,000, bus.MemoryOptions.MaxDeadLetters) and
// no longer listed or requeueable. Their records stay in the diagnostics store
// (docs/operations.md#dead-letters). Destination "" holds evictions past the bus's bound
// of count keys (bus.MaxEvictedKeys).
type Count struct {
	Destination string `json:"destination"`
	Count       int    `json:"count"`
	Evicted     int    `json:"evicted,omitempty"`
}

// EvictionCounter is a DeadLetterBox that drops dead letters past a bound and counts them
// (bus.Memory), each labelled with the business unit its body names (BusinessUnitOf).
type EvictionCounter interface {
	DeadLetterEvicted(ctx context.Context, keep func(businessUnit string) bool) (map[string]int, error)
}

// Service lists, requeues and counts dead letters for a scope.
type Service struct {
	// Box is the bus's dead letters; nil when the bus in use offers no DeadLetterBox (every
	// call then answers ErrNoBox).
	Box bus.DeadLetterBox
	Log *slog.Logger // may be nil
	// Audit records every requeue and discard (required for them: without it they answer
	// ErrNoAudit) and is the pace's count.
	Audit store.DeadLetterAuditStore
	// Clock stamps the actions and the pace (nil: automation.SystemClock).
	Clock automation.Clock
	// RequeuePerMinute paces requeues like paced releases pace held rows: at most this many
	// in any minute, counted from the audit, so across operators, forms and instances
	// (0: DefaultRequeuePerMinute).
	RequeuePerMinute int
}

// DefaultRequeuePerMinute is the requeue pace when none is configured: a route that has
// just been fixed gets its backlog back at a rate its consumers and providers absorb, as a
// paced release does (support.Config.DefaultReleasePerMinute is the same order).
const DefaultRequeuePerMinute = 60

// MaxBulk bounds the dead letters one bulk requeue or discard names.
const MaxBulk = 100

// ErrNoAudit: the service has no audit store, so it takes no action.
var ErrNoAudit = automation.Errorf(automation.CodeUnavailable, "dead-letter actions are audited and no audit store is configured")

// ErrNoBox: the bus in use does not list its dead letters through this API.
var ErrNoBox = automation.Errorf(automation.CodeConflict, "this runtime's bus does not list its dead letters here: read each entity's dead-letter subqueue (docs/operations.md#dead-letters)")

// BusinessUnitOf reads the business unit a message body names ("" when none).
func BusinessUnitOf(body []byte) string {
	var v struct {
		Snake string `json:"business_unit_id"`
		Cloud string `json:"businessunitid"`
		Camel string `json:"businessUnitId"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	for _, s := range []string{v.Snake, v.Cloud, v.Camel} {
		if s != "" {
			return s
		}
	}
	return ""
}

// visible: a dead letter of a unit in scope; one naming no unit only for a caller who sees
// every unit.
func visible(scope automation.Scope, d bus.DeadLetter) bool {
	bu := BusinessUnitOf(d.Message.Body)
	if bu == "" {
		return scope.All()
	}
	return scope.Allows(bu)
}

// ListParams selects a page: of one business unit (BusinessUnitID, which must be in scope)
// or of every unit the scope sees (""), of one route (Destination) or all.
type ListParams struct {
	BusinessUnitID string
	Destination    string
	After          string
	Limit          int
}

// List returns a page of the dead letters the scope sees, oldest first, and the ID to
// continue after ("" on the last page). Errors: a unit outside the scope is not found.
func (s *Service) List(ctx context.Context, scope automation.Scope, p ListParams) ([]Item, string, error) {
	if p.BusinessUnitID != "" && !scope.Allows(p.BusinessUnitID) {
		return nil, "", automation.Errorf(automation.CodeNotFound, "business unit %q not found", p.BusinessUnitID)
	}
	if s == nil || s.Box == nil {
		return nil, "", ErrNoBox
	}
	keep := func(d bus.DeadLetter) bool {
		if p.BusinessUnitID != "" {
			return BusinessUnitOf(d.Message.Body) == p.BusinessUnitID
		}
		return visible(scope, d)
	}
	ds, next, err := s.Box.DeadLetterList(ctx, bus.DeadLetterListParams{Destination: p.Destination, After: p.After, Limit: p.Limit, Keep: keep})
	if errors.Is(err, bus.ErrDeadLetterNotFound) {
		return nil, "", automation.Invalid("cursor", "does not name a dead letter of this list")
	}
	if err != nil {
		return nil, "", err
	}
	out := make([]Item, 0, len(ds))
	for _, d := range ds {
		out = append(out, itemOf(d))
	}
	return out, next, nil
}

// Counts returns the dead letters per route the scope sees, by route name.
func (s *Service) Counts(ctx context.Context, scope automation.Scope) ([]Count, error) {
	if s == nil || s.Box == nil {
		return nil, ErrNoBox
	}
	m, err := s.Box.DeadLetterCount(ctx, func(d bus.DeadLetter) bool { return visible(scope, d) })
	if err != nil {
		return nil, err
	}
	var evicted map[string]int
	if ec, ok := s.Box.(EvictionCounter); ok {
		evicted, err = ec.DeadLetterEvicted(ctx, func(bu string) bool {
			if bu == "" {
				return scope.All()
			}
			return scope.Allows(bu)
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]Count, 0, len(m)+len(evicted))
	for dest, n := range m {
		out = append(out, Count{Destination: dest, Count: n, Evicted: evicted[dest]})
	}
	for dest, n := range evicted {
		if _, listed := m[dest]; !listed && n > 0 {
			out = append(out, Count{Destination: dest, Evicted: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Destination < out[j].Destination })
	return out, nil
}

func itemOf(d bus.DeadLetter) Item {
	it := Item{ID: d.ID, Destination: d.Message.Destination, MessageID: d.Message.ID, SessionID: d.Message.SessionID,
		BusinessUnitID: BusinessUnitOf(d.Message.Body), Reason: d.Reason, DeliveryCount: d.Message.DeliveryCount}
	if !d.DeadLetteredOn.IsZero() {
		on := d.DeadLetteredOn.UTC()
		it.DeadLetteredOn = &on
	}
	if body := bytes.TrimSpace(d.Message.Body); json.Valid(body) && len(body) > 0 {
		var b bytes.Buffer
		if json.Compact(&b, body) == nil {
			it.Body = maskJSON(b.Bytes())
		}
	} else {
		it.BodyText = logmask.String(string(d.Message.Body))
	}
	it.ETag = ETagOf(d)
	return it
}
