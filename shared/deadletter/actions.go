package deadletter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/logmask"
	"github.com/automation-platform/automation/shared/store"
)

// ETagOf names a dead letter exactly: a hash of its list id, route, message id, session and
// the instant it was dead-lettered (32 hex characters). The list id alone is not enough on
// every bus: an id names another dead letter once its own was requeued (a Service Bus
// sequence number is reused by nothing, but the in-process list's ids only stay unique
// across restarts because Kept restores its sequence). A restart of the embedded runtime
// keeps every listed dead letter's id and DeadLetteredOn (Kept), so its ETag, and the audit
// row keyed by it, still match.
func ETagOf(d bus.DeadLetter) string {
	h := sha256.New()
	for _, p := range []string{d.ID, d.Message.Destination, d.Message.ID, d.Message.SessionID, strconv.FormatInt(d.DeadLetteredOn.UnixMilli(), 10)} {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// ActRequest is one action on one dead letter. ETag is the one the caller read (Item.ETag):
// the If-Match of the action. "" acts on whatever ID names now (the support API's older
// form; the console always sends it).
type ActRequest struct {
	ID       string
	ETag     string
	Operator string
	Reason   string
	// BatchID names the bulk action it is part of ("" for a single one).
	BatchID string
}

// ActResult is what an action did: the dead letter, and the audit of the action. Replayed
// is true when the same action on the same dead letter had been taken before (by anyone):
// nothing was done again, and Operator, Reason and ActedOn are the first action's.
type ActResult struct {
	DeadLetter Item                   `json:"deadLetter"`
	Action     store.DeadLetterAction `json:"action"`
	Operator   string                 `json:"operator"`
	Reason     string                 `json:"reason"`
	ActedOn    time.Time              `json:"actedOn"`
	BatchID    string                 `json:"batchId,omitempty"`
	Replayed   bool                   `json:"replayed,omitempty"`
}

// BusCallBound bounds one requeue or discard call to the bus; AbandonedAfter (longer) is
// how old a recorded action must be (strictly older) before another may take it over when its dead letter is
// still listed: by then its bus call has ended, so a process that recorded the action and
// died before (or while) calling the bus does not leave the dead letter stuck answering
// Conflict.
const (
	BusCallBound   = time.Minute
	AbandonedAfter = 5 * time.Minute
)

func (s *Service) now() time.Time {
	if s.Clock == nil {
		return automation.SystemClock{}.Now()
	}
	return s.Clock.Now().UTC()
}

func (s *Service) pace() int {
	if s.RequeuePerMinute > 0 {
		return s.RequeuePerMinute
	}
	return DefaultRequeuePerMinute
}

// Requeue puts a dead letter's original message back on its route, after a fix (the
// registry, a business unit, a template), as a first delivery again, and records who and
// why in the audit (docs/operations.md#dead-letters). Errors: CodeInvalidInput (no id, no
// operator or reason; nothing done), CodeNotFound (unknown, or outside the scope),
// CodePreconditionFailed (the id names another dead letter than req.ETag, or that dead
// letter was discarded: the message says what is there now), CodeTooManyRequests (the
// pace's allowance of this minute is used up; nothing done). A repeat of a requeue that was
// done, naming the etag it read, answers the first one's result with Replayed and sends
// nothing; without the etag it answers CodeNotFound, concurrent or not, so one caller only
// hears that it requeued the dead letter. A repeat naming the etag while the first one's
// action is still with the bus answers CodeConflict (that action may yet fail: nobody hears
// "done" before it is).
func (s *Service) Requeue(ctx context.Context, scope automation.Scope, req ActRequest) (ActResult, error) {
	return s.act(ctx, scope, store.DeadLetterRequeue, req)
}

// Discard removes a dead letter without delivering it, with the reason in the audit. The
// same errors, replay and precondition as Requeue; it is not paced.
func (s *Service) Discard(ctx context.Context, scope automation.Scope, req ActRequest) (ActResult, error) {
	return s.act(ctx, scope, store.DeadLetterDiscard, req)
}

func (s *Service) check(req *ActRequest) error {
	var errs []error
	req.ID, req.ETag = strings.TrimSpace(req.ID), strings.TrimSpace(req.ETag)
	if req.ID == "" {
		errs = append(errs, automation.Invalid("id", "is required: the id of a dead letter (its list)"))
	}
	op, reason, err := automation.CheckAudit(req.Operator, req.Reason)
	if err != nil {
		errs = append(errs, err)
	}
	req.Operator, req.Reason = op, reason
	return automation.InvalidFields(errs...)
}

func (s *Service) act(ctx context.Context, scope automation.Scope, action store.DeadLetterAction, req ActRequest) (ActResult, error) {
	if s == nil || s.Box == nil {
		return ActResult{}, ErrNoBox
	}
	if s.Audit == nil {
		return ActResult{}, ErrNoAudit
	}
	if err := s.check(&req); err != nil {
		return ActResult{}, err
	}
	notFound := automation.Errorf(automation.CodeNotFound, "dead letter %q not found", req.ID)
	d, err := s.Box.DeadLetterGet(ctx, req.ID)
	switch {
	case errors.Is(err, bus.ErrDeadLetterNotFound):
		if req.ETag == "" {
			return ActResult{}, notFound
		}
		return s.replay(ctx, scope, action, req.ETag, notFound)
	case err != nil:
		return ActResult{}, err
	case !visible(scope, d):
		return ActResult{}, notFound
	}
	etag := ETagOf(d)
	if req.ETag != "" && req.ETag != etag {
		// The form was read from another dead letter than the one this id names now.
		if res, err := s.replay(ctx, scope, action, req.ETag, nil); err != nil || res.Action != "" {
			return res, err
		}
		return ActResult{}, &automation.Error{Code: automation.CodePreconditionFailed, Field: "etag",
			Message: fmt.Sprintf("dead letter %s is now another message (%s on %s, %s); nothing was done: reload the list and act on what it shows", req.ID, d.Message.ID, d.Message.Destination, d.Reason)}
	}
	now := s.now()
	if action == store.DeadLetterRequeue {
		n, err := s.Audit.DeadLetterAuditCount(ctx, store.DeadLetterRequeue, now.Add(-time.Minute))
		if err != nil {
			return ActResult{}, err
		}
		if n >= s.pace() {
			return ActResult{}, automation.Errorf(automation.CodeTooManyRequests,
				"%d dead letters were requeued in the last minute, the pace's most (%d a minute); nothing was done: requeue it again in a minute", n, s.pace())
		}
	}
	it := itemOf(d)
	a := store.DeadLetterAudit{ETag: etag, Action: action, DeadLetterID: d.ID, Destination: d.Message.Destination, MessageID: d.Message.ID,
		BusinessUnitID: it.BusinessUnitID, Operator: req.Operator, Reason: req.Reason, BatchID: req.BatchID, ActedOn: now}
	err = s.Audit.DeadLetterAuditInsert(ctx, a)
	if errors.Is(err, store.ErrConflict) {
		// The dead letter is still here (d, read above) with an action recorded on it. One
		// recorded more than AbandonedAfter ago never reached the bus (its call is bounded by
		// BusCallBound): its process died between the audit and the call. This action takes
		// it over, and exactly one caller does.
		var taken bool
		if taken, err = s.Audit.DeadLetterAuditTakeOver(ctx, a, now.Add(-AbandonedAfter)); err != nil {
			return ActResult{}, err
		}
		if taken && s.Log != nil {
			s.Log.Warn("dead-letter action taken over: the one recorded before it never reached the bus", "id", d.ID, "etag", etag)
		}
		if !taken {
			err = store.ErrConflict
		}
	}
	if errors.Is(err, store.ErrConflict) {
		// Someone acted on it first (a concurrent form, another operator). One without the
		// etag is answered as if it came after (the dead letter is gone: 404), so exactly
		// one caller hears that its action was done. One that names the etag it read is a
		// repeat and gets the first one's result, once there is one: while the dead letter
		// is still there, that action is still with the bus (or the bus refused it and its
		// audit row is being withdrawn) and may yet fail, so the repeat hears Conflict,
		// never "done" for what may not happen.
		if req.ETag == "" {
			return ActResult{}, notFound
		}
		if now, err := s.Box.DeadLetterGet(ctx, d.ID); err == nil && ETagOf(now) == etag {
			return ActResult{}, automation.Errorf(automation.CodeConflict,
				"another request is acting on dead letter %s right now (its requeue or discard is with the bus); nothing was done: reload the list in a moment (an action that never reaches the bus can be taken over %s after it was recorded)", d.ID, AbandonedAfter)
		} else if err != nil && !errors.Is(err, bus.ErrDeadLetterNotFound) {
			return ActResult{}, err
		}
		return s.replay(ctx, scope, action, etag, notFound)
	} else if err != nil {
		return ActResult{}, err
	}
	callCtx, cancel := context.WithTimeout(ctx, BusCallBound)
	if action == store.DeadLetterRequeue {
		_, err = s.Box.DeadLetterRequeue(callCtx, d.ID)
	} else {
		_, err = s.Box.DeadLetterDiscard(callCtx, d.ID)
	}
	cancel()
	if err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		// The bus may or may not have acted: the audit row stays. If the dead letter is still
		// listed AbandonedAfter from now, the next action on it takes this one over.
		return ActResult{}, fmt.Errorf("dead letter %s: the bus did not answer the %s in time; it may have been done: reload the list: %w",
			d.ID, strings.ToLower(string(action)), err)
	}
	if err != nil {
		// Nothing was done: the audit row goes, so the action can be taken again.
		if derr := s.Audit.DeadLetterAuditDelete(ctx, etag); derr != nil && s.Log != nil {
			s.Log.Error("dead-letter audit not withdrawn after the bus refused the action", "etag", etag, "error", derr)
		}
		if errors.Is(err, bus.ErrDeadLetterNotFound) {
			return ActResult{}, notFound
		}
		return ActResult{}, err
	}
	if s.Log != nil {
		s.Log.Info("dead letter "+strings.ToLower(string(action))+"d", "id", d.ID, "etag", etag, "destination", d.Message.Destination,
			"messageId", d.Message.ID, "operator", req.Operator, "reason", req.Reason, "batchId", req.BatchID)
	}
	return ActResult{DeadLetter: it, Action: action, Operator: req.Operator, Reason: req.Reason, ActedOn: now, BatchID: req.BatchID}, nil
}

// replay answers an action on a dead letter that is gone from the list from the audit of
// the action that removed it: the same action is a replay (nothing done again); another is
// 412 naming what was done. Without an audit row (or one outside the scope) it answers
// missing (nil: an empty result and no error).
func (s *Service) replay(ctx context.Context, scope automation.Scope, action store.DeadLetterAction, etag string, missing error) (ActResult, error) {
	a, err := s.Audit.DeadLetterAuditGet(ctx, etag)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !auditVisible(scope, a)) {
		return ActResult{}, missing
	}
	if err != nil {
		return ActResult{}, err
	}
	if a.Action != action {
		return ActResult{}, &automation.Error{Code: automation.CodePreconditionFailed, Field: "etag",
			Message: fmt.Sprintf("dead letter %s was %s by %s at %s (%s); nothing was done", a.DeadLetterID, pastTense(a.Action), a.Operator,
				a.ActedOn.UTC().Format(time.RFC3339), a.Reason)}
	}
	return ActResult{DeadLetter: Item{ID: a.DeadLetterID, Destination: a.Destination, MessageID: a.MessageID, BusinessUnitID: a.BusinessUnitID, ETag: a.ETag},
		Action: a.Action, Operator: a.Operator, Reason: a.Reason, ActedOn: a.ActedOn.UTC(), BatchID: a.BatchID, Replayed: true}, nil
}

func messageOf(err error) string {
	var e *automation.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

func pastTense(a store.DeadLetterAction) string {
	if a == store.DeadLetterDiscard {
		return "discarded"
	}
	return "requeued"
}

func auditVisible(scope automation.Scope, a store.DeadLetterAudit) bool {
	if a.BusinessUnitID == "" {
		return scope.All()
	}
	return scope.Allows(a.BusinessUnitID)
}

// Ref names one dead letter of a bulk action: its id and the ETag it was read with.
type Ref struct {
	ID   string `json:"id"`
	ETag string `json:"etag,omitempty"`
}

// BulkRequest requeues up to MaxBulk dead letters with one operator and reason.
type BulkRequest struct {
	Refs     []Ref
	Operator string
	Reason   string
}

// BulkResult says what a bulk requeue did with each dead letter it named, in order:
// Done (requeued now or before: Replayed), Refused (with the error's message: gone, another
// message now, discarded, another request's action on it still with the bus), or Deferred by the pace (requeue them again after NextOn).
type BulkResult struct {
	BatchID  string      `json:"batchId"`
	Done     []ActResult `json:"done"`
	Refused  []Refusal   `json:"refused,omitempty"`
	Deferred []Ref       `json:"deferred,omitempty"`
	// RatePerMinute is the pace; NextOn, with Deferred, when the next allowance starts.
	RatePerMinute int        `json:"ratePerMinute"`
	NextOn        *time.Time `json:"nextOn,omitempty"`
}

// Refusal is one dead letter a bulk action did not act on, and why.
type Refusal struct {
	Ref
	Status  automation.ErrorCode `json:"code"`
	Message string               `json:"message"`
}

// RequeueMany requeues dead letters after a fix, paced: of those named, at most the pace's
// allowance left in the current minute are requeued (the requeues of the last minute,
// counted from the audit, by anyone), the rest are Deferred and nothing of them changes. Each
// is one audited action with the batch's id; one refused does not stop the others. Errors:
// CodeInvalidInput (none or more than MaxBulk named, a duplicate, no operator or reason;
// nothing done), ErrNoBox, ErrNoAudit, the store's.
func (s *Service) RequeueMany(ctx context.Context, scope automation.Scope, req BulkRequest) (BulkResult, error) {
	return s.many(ctx, scope, store.DeadLetterRequeue, req)
}

// DiscardMany discards dead letters, each one audited with the batch's id, as RequeueMany
// does but without the pace (a discard sends nothing).
func (s *Service) DiscardMany(ctx context.Context, scope automation.Scope, req BulkRequest) (BulkResult, error) {
	return s.many(ctx, scope, store.DeadLetterDiscard, req)
}

func (s *Service) many(ctx context.Context, scope automation.Scope, action store.DeadLetterAction, req BulkRequest) (BulkResult, error) {
	if s == nil || s.Box == nil {
		return BulkResult{}, ErrNoBox
	}
	if s.Audit == nil {
		return BulkResult{}, ErrNoAudit
	}
	var errs []error
	switch {
	case len(req.Refs) == 0:
		errs = append(errs, automation.Invalid("ids", "name at least one dead letter"))
	case len(req.Refs) > MaxBulk:
		errs = append(errs, automation.Invalid("ids", "at most %d dead letters at once, got %d", MaxBulk, len(req.Refs)))
	}
	seen := map[string]bool{}
	for i, r := range req.Refs {
		if strings.TrimSpace(r.ID) == "" || seen[r.ID] {
			errs = append(errs, automation.Invalid(fmt.Sprintf("ids[%d]", i), "is empty or named twice"))
		}
		seen[r.ID] = true
	}
	op, reason, err := automation.CheckAudit(req.Operator, req.Reason)
	if err != nil {
		errs = append(errs, err)
	}
	if err := automation.InvalidFields(errs...); err != nil {
		return BulkResult{}, err
	}
	now := s.now()
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d", op, now.UnixNano())
	for _, r := range req.Refs {
		fmt.Fprintf(h, "\x00%s\x00%s", r.ID, r.ETag)
	}
	out := BulkResult{BatchID: "dlq-" + hex.EncodeToString(h.Sum(nil)[:8]), RatePerMinute: s.pace(), Done: []ActResult{}}
	left := len(req.Refs)
	if action == store.DeadLetterRequeue {
		used, err := s.Audit.DeadLetterAuditCount(ctx, store.DeadLetterRequeue, now.Add(-time.Minute))
		if err != nil {
			return BulkResult{}, err
		}
		left = s.pace() - used
	}
	for _, r := range req.Refs {
		if left <= 0 {
			out.Deferred = append(out.Deferred, r)
			continue
		}
		res, err := s.act(ctx, scope, action, ActRequest{ID: r.ID, ETag: r.ETag, Operator: op, Reason: reason, BatchID: out.BatchID})
		switch code := automation.CodeOf(err); {
		case err == nil:
			out.Done = append(out.Done, res)
			if !res.Replayed {
				left--
			}
		case code == automation.CodeTooManyRequests:
			left = 0
			out.Deferred = append(out.Deferred, r)
		case code == automation.CodeNotFound || code == automation.CodePreconditionFailed || code == automation.CodeConflict:
			out.Refused = append(out.Refused, Refusal{Ref: r, Status: code, Message: messageOf(err)})
		default:
			return out, err
		}
	}
	if len(out.Deferred) > 0 {
		next := now.Add(time.Minute)
		out.NextOn = &next
	}
	return out, nil
}

// Actions lists the newest requeues and discards the scope sees (at most limit, 1..
// store.MaxDeadLetterAuditList), newest first.
func (s *Service) Actions(ctx context.Context, scope automation.Scope, limit int) ([]store.DeadLetterAudit, error) {
	if s == nil || s.Audit == nil {
		return nil, ErrNoAudit
	}
	return s.Audit.DeadLetterAuditList(ctx, store.DeadLetterAuditListParams{Scope: scope, Limit: min(max(limit, 1), store.MaxDeadLetterAuditList)})
}

// maskJSON masks personal data (logmask.String) in every string of a compact JSON text and
// keeps everything else as it is, members in their order.
func maskJSON(b []byte) []byte {
	var out bytes.Buffer
	for i := 0; i < len(b); {
		if b[i] != '"' {
			out.WriteByte(b[i])
			i++
			continue
		}
		j := i + 1
		for j < len(b) && b[j] != '"' {
			if b[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(b) {
			out.Write(b[i:])
			break
		}
		lit := b[i : j+1]
		var v string
		if json.Unmarshal(lit, &v) == nil {
			if m := logmask.String(v); m != v {
				enc := json.NewEncoder(&out)
				enc.SetEscapeHTML(false)
				_ = enc.Encode(m)
				out.Truncate(out.Len() - 1) // Encode's newline
				i = j + 1
				continue
			}
		}
		out.Write(lit)
		i = j + 1
	}
	return out.Bytes()
}
