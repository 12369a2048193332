package sim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/store"
)

// The dead letters' part of the simulation (docs/simulation.md, "Dead letters"; the operator
// actions of docs/operations.md#dead-letters). The workload sends poison events: source
// events for a business unit that does not exist, which DomainEventHandler dead-letters
// ("unknown business unit"). Two units: lateUnit, which an operator creates in the middle of
// the run (the fix: a requeue after it succeeds), and ghostUnit, which never exists (a
// requeue dead-letters the message again). At random steps (its own random stream) an
// operator lists the dead letters and requeues or discards some through deadletter.Service,
// the code the support API calls, as one of two support operators (one of every unit, one of
// the two units only). The service is the runtime's with two wrappers: the bus (box) records
// every requeue and discard it did, and refuses one under deadletter-refused; the audit store
// dies after its insert under deadletter-crash (the API process dies between the audit row
// and the bus call, while the bus, Service Bus on Azure, lives on).
//
// The in-process bus's dead-letter list survives a restart (deadletter.Kept, operations.md):
// the operator acts through the runtime's box (d.rt.DeadLetters.Box), so a requeue or discard
// is written to the list's index and does not come back after the next restart (acting on
// rt.Memory alone brought them back: TestSeedsPass was red). An operator's session does all
// it started (a take-over included) before the step ends: the simulated clock jumps past
// deadletter.AbandonedAfter for a take-over, as the other faults' clock jumps do; except
// that, on half of the deadletter-crash faults, the process really dies there (a restart
// point): the died action is then taken over by the first session after the restart, on the
// dead letter listed again with the etag read before it (dead-letter-take-over-after-restart).

// The poison events' units and source.
const (
	lateUnit     = "bu-late"  // created by an operator in the middle of the run
	ghostUnit    = "bu-ghost" // never created
	poisonSource = "/sim"     // the scenario's event source (scenario.go)
)

// OpPoison is a source event for a business unit that does not exist (yet): dead-lettered.
const OpPoison OpKind = "poison"

// poison adds 1–3 bursts of 1–4 poison events (ClassSession upserts, each its own entity and
// id, minutes apart: a domain app publishing for a unit not provisioned yet) at random
// instants of the history, two bursts in three for lateUnit. It draws from its own generator,
// so the rest of a seed's workload is what it was before.
func (w *Workload) poison(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0xdead1e77e5dead))
	for b := 1 + rng.IntN(3); b > 0; b-- {
		unit := lateUnit
		if rng.IntN(3) == 0 {
			unit = ghostUnit
		}
		at := w.Start.Add(rngMinutes(rng, 1, 38*24*60))
		for k := 1 + rng.IntN(4); k > 0; k-- {
			n := len(w.Ops)
			w.Ops = append(w.Ops, Op{At: at, Kind: OpPoison, SourceType: "ClassSession",
				Source:  fmt.Sprintf("%08x-0000-4000-8000-dead%08x", seed&0xffffffff, n),
				EventID: fmt.Sprintf("dl-%d-%d", seed, n), Unit: unit, Revision: 1, Booked: 1 + rng.IntN(9), Capacity: 10,
				Email: fmt.Sprintf("coach-dl%d@example.test", n)})
			at = at.Add(rngMinutes(rng, 1, 10))
		}
	}
}

// The operator's probabilities: a session per step (when there are dead letters), and the
// faults per action.
const (
	pOperate        = 0.15
	pFix            = 0.4 // per session that lists lateUnit's dead letters, until it exists
	pDLCrash        = 0.2
	pDLRefused      = 0.2
	pDLLostAnswer   = 0.25
	pDLOtherAction  = 0.25
	dlPerMinute     = 1 // the simulated service's requeue pace (deadletter.Service.RequeuePerMinute)
	dlActPerSession = 4
)

// errDied is what the audit store answers when deadletter-crash killed the API process right
// after the audit row was written; errBusRefused what the bus answers when deadletter-refused
// refused an action (nothing done).
var (
	errDied       = errors.New("sim: the process died after the dead-letter audit row, before the bus call (deadletter-crash)")
	errBusRefused = errors.New("sim: the bus refused the dead-letter action (deadletter-refused)")
)

// dlOperator is an operator allowed to act on dead letters: support, with a scope.
type dlOperator struct {
	name  string
	scope automation.Scope
}

var dlOperators = []dlOperator{{"support-all@example.test", automation.AllBusinessUnits()},
	{"support-late@example.test", automation.BusinessUnits(lateUnit, ghostUnit)}}

// dlState is what the operator did and saw, for the checks (check.go, checkDeadLetters).
type dlState struct {
	rng   *rand.Rand
	fixed bool // lateUnit exists
	// busDone: per ETag, the actions the bus did (requeues and discards that succeeded).
	busDone map[string][]store.DeadLetterAction
	// conflicted: the ETags of the dead letters an action was answered 409 on.
	conflicted map[string]string // ETag -> the message id
	// last: per message id, the last action the service answered done on one of its dead
	// letters (the operator's view, not the bus's), and whether lateUnit existed then (a
	// requeue of lateUnit's message after the fix must take effect).
	last map[string]dlLast
	// events: the poison events by message id (events.Identity of source and id).
	events map[string]dlEvent
	// checks made during the run: applied in final.
	checks []dlCheck
	// died: actions that died between their audit row and the bus call with their process
	// (the restart point of deadletter-crash); the first session after the restart takes
	// them over.
	died []dlDied
	// takeOverOnly: the session only takes the died actions over (Finish's, after the last
	// step: an action drawn then could die with no session left to take it over).
	takeOverOnly bool
	// crashNext and refuseNext arm the audit store's and the bus's fault for the next call.
	crashNext, refuseNext bool
}

// dlEvent is one poison event: its id and its entity (a ClassSession). Its effect, once its
// unit exists, is the entity's source snapshot written by this event (LastEventId), which
// stays (ProcessedEvent rows are purged after their dedupe window).
type dlEvent struct{ id, entity, unit string }

type dlLast struct {
	action store.DeadLetterAction
	fixed  bool
	etag   string
}

type dlDied struct {
	it    deadletter.Item
	a     store.DeadLetterAction
	opIdx int
	req   deadletter.ActRequest
}

type dlCheck struct {
	inv    string
	ok     bool
	detail string
}

func (s *dlState) check(inv string, ok bool, format string, a ...any) {
	s.checks = append(s.checks, dlCheck{inv, ok, fmt.Sprintf(format, a...)})
}

func newDLState(w *Workload) *dlState {
	s := &dlState{rng: rand.New(rand.NewPCG(w.Seed, 0xdeadde11e77e5)), busDone: map[string][]store.DeadLetterAction{},
		conflicted: map[string]string{}, last: map[string]dlLast{}, events: map[string]dlEvent{}}
	for _, op := range w.Ops {
		if op.Kind == OpPoison {
			s.events[events.Identity(poisonSource, op.EventID)] = dlEvent{id: op.EventID, entity: op.Source, unit: op.Unit}
		}
	}
	return s
}

// dlBox is the bus's dead letters as the simulator sees them: it records what the bus did and
// refuses an action when deadletter-refused is armed.
type dlBox struct {
	bus.DeadLetterBox
	s *dlState
}

func (b dlBox) act(ctx context.Context, id string, a store.DeadLetterAction, call func(context.Context, string) (bus.DeadLetter, error)) (bus.DeadLetter, error) {
	if b.s.refuseNext {
		b.s.refuseNext = false
		return bus.DeadLetter{}, errBusRefused
	}
	d, err := call(ctx, id)
	if err == nil {
		et := deadletter.ETagOf(d)
		b.s.busDone[et] = append(b.s.busDone[et], a)
	}
	return d, err
}

func (b dlBox) DeadLetterRequeue(ctx context.Context, id string) (bus.DeadLetter, error) {
	return b.act(ctx, id, store.DeadLetterRequeue, b.DeadLetterBox.DeadLetterRequeue)
}

func (b dlBox) DeadLetterDiscard(ctx context.Context, id string) (bus.DeadLetter, error) {
	return b.act(ctx, id, store.DeadLetterDiscard, b.DeadLetterBox.DeadLetterDiscard)
}

// dlAudit is the audit store whose insert kills the process after it committed when
// deadletter-crash is armed.
type dlAudit struct {
	store.DeadLetterAuditStore
	s *dlState
}

func (a dlAudit) DeadLetterAuditInsert(ctx context.Context, x store.DeadLetterAudit) error {
	if err := a.DeadLetterAuditStore.DeadLetterAuditInsert(ctx, x); err != nil {
		return err
	}
	if a.s.crashNext {
		a.s.crashNext = false
		return errDied
	}
	return nil
}

// operate is one step's operator session (After, on a live process), on about one step in
// seven: the dead letters are listed; the fix (lateUnit created) when lateUnit's are among
// them, until it is done; up to dlActPerSession requeues or discards of listed ones, with
// their faults; then the bus delivers what was requeued, and each action's outcome is
// checked at once. The first session after a restart point (s.died) always runs, and takes
// the died actions over first.
func (d *driver) operate(ctx context.Context) error {
	s := d.dl
	if d.off || d.crashed || d.rt == nil || d.rt.DeadLetters == nil || d.rt.Memory == nil {
		return nil
	}
	if len(s.died) == 0 && s.rng.Float64() >= pOperate {
		return nil
	}
	svc := *d.rt.DeadLetters
	svc.Box, svc.Audit, svc.RequeuePerMinute = dlBox{d.rt.DeadLetters.Box, s}, dlAudit{d.rt.Store, s}, dlPerMinute
	acted := map[string]deadletter.Item{}
	actions := map[string]store.DeadLetterAction{}
	died := len(s.died)
	defer func() {
		if len(s.died) > died && !d.crashed {
			// A restart point of this session (dlAct): the process dies now.
			d.crashed = true
			d.kill()
		}
	}()
	if len(s.died) > 0 {
		// After the restart the dead letter is listed again with the etag read before it,
		// and the died action is taken over once AbandonedAfter has passed.
		d.clock.Advance(deadletter.AbandonedAfter + time.Minute)
		for i, x := range s.died {
			if i > 0 {
				// The pace allows one requeue a minute, counted from the audit: the operator
				// takes the next died action over a minute later, as the 429 would ask.
				d.clock.Advance(time.Minute + time.Second)
			}
			got, err := d.rt.DeadLetters.Box.DeadLetterGet(ctx, x.it.ID)
			s.check(InvDLNo409, err == nil && deadletter.ETagOf(got) == x.it.ETag,
				"dead letter %s (message %s), whose %s died with its process, is not listed again after the restart with etag %s (%v)", x.it.ID, x.it.MessageID, x.a, x.it.ETag, err)
			res, err := call(ctx, &svc, dlOperators[x.opIdx], x.a, x.req)
			s.check(InvDLNo409, err == nil && res.Action == x.a && !res.Replayed,
				"dead letter %s: the %s that died with its process was not taken over after the restart: %+v %v", x.it.ID, x.a, res, err)
			if err == nil && !res.Replayed {
				d.counts["dead-letter-take-over-after-restart"]++
				acted[x.it.ETag], actions[x.it.ETag] = x.it, x.a
				s.last[x.it.MessageID] = dlLast{action: x.a, fixed: s.fixed, etag: x.it.ETag}
			}
		}
		s.died = nil
		died = 0
	}
	opIdx := s.rng.IntN(len(dlOperators))
	op := dlOperators[opIdx]
	items, _, err := svc.List(ctx, op.scope, deadletter.ListParams{Limit: 50})
	if err != nil {
		return fmt.Errorf("sim: listing the dead letters: %w", err)
	}
	if len(items) == 0 && len(acted) == 0 {
		return nil
	}
	if !s.fixed && s.rng.Float64() < pFix && slices.ContainsFunc(items, func(it deadletter.Item) bool { return it.BusinessUnitID == lateUnit }) {
		// The fix, once an operator sees lateUnit's dead letters: the missing business unit
		// is created (as its domain app's provisioning does).
		if err := d.rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: lateUnit, Name: lateUnit, TimeZoneID: "UTC"}); err != nil {
			return fmt.Errorf("sim: creating %s: %w", lateUnit, err)
		}
		s.fixed = true
		d.counts["dead-letter-fix"]++
	}
	d.counts["dead-letter-list"]++
	s.rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	n := min(len(items), dlActPerSession)
	if s.takeOverOnly {
		// Finish's session takes the died actions over and draws no new one (with its
		// faults): after the last step no session is left to take a died one over.
		n = 0
	}
	for _, it := range items[:n] {
		a := s.policy(it)
		done, err := d.dlAct(ctx, &svc, opIdx, it, a)
		if err != nil {
			return err
		}
		if done != "" {
			acted[it.ETag], actions[it.ETag] = it, done
			s.last[it.MessageID] = dlLast{action: done, fixed: s.fixed, etag: it.ETag}
		}
	}
	if len(acted) > 0 {
		// The requeued messages are delivered (the in-process bus; a consumer on Service Bus).
		if _, err := d.rt.Memory.Drain(ctx, 0); err != nil && !d.crashed {
			return fmt.Errorf("sim: delivering the requeued dead letters: %w", err)
		}
		if d.crashed {
			return nil
		}
	}
	for _, et := range sortedKeys(acted) {
		it := acted[et]
		ev := s.events[it.MessageID]
		snap, err := d.rt.Store.SourceSnapshotGet(ctx, "ClassSession", ev.entity)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		done := err == nil && snap.LastEventID == ev.id
		again := false
		all, _, err := d.rt.Memory.DeadLetterList(ctx, bus.DeadLetterListParams{Limit: bus.MaxDeadLetterPage})
		if err != nil {
			return err
		}
		for _, x := range all {
			again = again || (x.Message.ID == it.MessageID && deadletter.ETagOf(x) != it.ETag)
		}
		if actions[et] == store.DeadLetterDiscard {
			// Gone: neither delivered nor listed again.
			s.check(InvDLDiscarded, !done && !again, "discarded dead letter %s (message %s, unit %s): took effect %v, dead-lettered again %v",
				it.ID, it.MessageID, it.BusinessUnitID, done, again)
			continue
		}
		// Handled once: its effect happened (the unit exists now) or it was dead-lettered
		// again (it does not), never both, never neither.
		s.check(InvDLRequeued, done != again, "requeued dead letter %s (message %s, unit %s, fixed %v): took effect %v, dead-lettered again %v",
			it.ID, it.MessageID, it.BusinessUnitID, s.fixed, done, again)
	}
	return nil
}

// policy is the operator's choice: requeue what the fix made good (mostly), discard what
// nothing will fix (mostly), either for the rest.
func (s *dlState) policy(it deadletter.Item) store.DeadLetterAction {
	p := 0.5
	switch {
	case it.BusinessUnitID == lateUnit && s.fixed:
		p = 0.85
	case it.BusinessUnitID == ghostUnit:
		p = 0.3
	}
	if s.rng.Float64() < p {
		return store.DeadLetterRequeue
	}
	return store.DeadLetterDiscard
}

func other(a store.DeadLetterAction) store.DeadLetterAction {
	if a == store.DeadLetterRequeue {
		return store.DeadLetterDiscard
	}
	return store.DeadLetterRequeue
}

// dlAudited reads the audit row of the dead letter named by etag: ok false when it has none.
func (d *driver) dlAudited(ctx context.Context, etag string) (store.DeadLetterAudit, bool, error) {
	x, err := d.rt.Store.DeadLetterAuditGet(ctx, etag)
	if errors.Is(err, store.ErrNotFound) {
		return x, false, nil
	}
	return x, err == nil, err
}

func call(ctx context.Context, svc *deadletter.Service, op dlOperator, a store.DeadLetterAction, req deadletter.ActRequest) (deadletter.ActResult, error) {
	req.Operator = op.name
	if a == store.DeadLetterRequeue {
		return svc.Requeue(ctx, op.scope, req)
	}
	return svc.Discard(ctx, op.scope, req)
}

// dlAct is one operator action on it, with the faults drawn for it; it answers the action
// the bus did ("" when none).
func (d *driver) dlAct(ctx context.Context, svc *deadletter.Service, opIdx int, it deadletter.Item, a store.DeadLetterAction) (store.DeadLetterAction, error) {
	s := d.dl
	op := dlOperators[opIdx]
	req := deadletter.ActRequest{ID: it.ID, ETag: it.ETag, Reason: fmt.Sprintf("sim: %s after checking the unit", a)}
	crash := d.kinds[DLCrash] && s.rng.Float64() < pDLCrash
	refuse := !crash && d.kinds[DLRefused] && s.rng.Float64() < pDLRefused
	lost := d.kinds[DLLostAnswer] && s.rng.Float64() < pDLLostAnswer
	second := d.kinds[DLOtherAction] && s.rng.Float64() < pDLOtherAction
	_, auditedBefore, err := d.dlAudited(ctx, it.ETag)
	if err != nil {
		return "", err
	}
	s.crashNext, s.refuseNext = crash, refuse
	res, err := call(ctx, svc, op, a, req)
	s.crashNext, s.refuseNext = false, false
	listed := func() bool {
		_, err := d.rt.Memory.DeadLetterGet(ctx, it.ID)
		return err == nil
	}
	audited := func() (store.DeadLetterAudit, bool, error) { return d.dlAudited(ctx, it.ETag) }
	if automation.CodeOf(err) == automation.CodeTooManyRequests {
		// Paced before the audit row: the fault armed for this call never struck.
		crash, refuse = false, false
	}
	switch {
	case crash:
		d.counts[string(DLCrash)]++
		s.check(InvDLAudit, errors.Is(err, errDied), "dead letter %s: the %s that died after its audit row answered %v", it.ID, a, err)
		// The operator, without an answer, sends it again a little later: past the pace's
		// minute (so the died requeue's allowance does not answer 429 before the take-over
		// guard is reached) and past BusCallBound, well before AbandonedAfter. The first is
		// still recorded and its dead letter listed, so 409 (it may yet be done).
		d.clock.Advance(deadletter.BusCallBound + time.Second)
		_, err = call(ctx, svc, op, a, req)
		code := automation.CodeOf(err)
		s.check(InvDLNo409, code == automation.CodeConflict,
			"dead letter %s: the repeat of a %s that died answered %v, want 409", it.ID, a, err)
		if code == automation.CodeConflict || code == automation.CodeTooManyRequests {
			s.conflicted[it.ETag] = it.MessageID
		}
		if code == automation.CodeConflict {
			d.counts["dead-letter-crash-repeat-409"]++ // the take-over guard answered, not the pace
		}
		if s.rng.IntN(2) == 0 {
			// The restart point: the process dies at the end of this session (operate), after
			// the bus delivered what the session requeued (the in-process bus loses a queued
			// message with its process); the first session after the restart takes this
			// action over.
			s.died = append(s.died, dlDied{it: it, a: a, opIdx: opIdx, req: req})
			d.counts["dead-letter-restart"]++
			return "", nil
		}
		// Back after AbandonedAfter (the clock jumps): this action takes the died one over.
		d.clock.Advance(deadletter.AbandonedAfter + time.Minute)
		res, err = call(ctx, svc, op, a, req)
		if err == nil {
			d.counts["dead-letter-take-over"]++
		}
	case refuse:
		d.counts[string(DLRefused)]++
		_, ok, aerr := audited()
		if aerr != nil {
			return "", aerr
		}
		s.check(InvDLAudit, errors.Is(err, errBusRefused) && !ok && listed(),
			"dead letter %s: a %s the bus refused answered %v; audit row kept %v, still listed %v", it.ID, a, err, ok, listed())
		if s.rng.IntN(2) == 1 {
			return "", nil // the operator leaves it for now
		}
		res, err = call(ctx, svc, op, a, req) // the operator tries again
	}
	switch code := automation.CodeOf(err); {
	case err == nil:
	case code == automation.CodeConflict:
		// Still another action's (a died one not taken over): nothing done; the dead letter
		// must not stay so (dead-letter-no-409-for-good, at the end).
		s.conflicted[it.ETag] = it.MessageID
		return "", nil
	case code == automation.CodeTooManyRequests:
		// The pace: nothing done.
		d.counts["dead-letter-paced"]++
		_, ok, aerr := audited()
		if aerr != nil {
			return "", aerr
		}
		s.check(InvDLAudit, (!ok || auditedBefore) && listed(), "dead letter %s: a paced %s (429) left an audit row %v (one before it %v), or the dead letter unlisted (listed %v)", it.ID, a, ok, auditedBefore, listed())
		return "", nil
	default:
		return "", fmt.Errorf("sim: %s of dead letter %s by %s: %w", a, it.ID, op.name, err)
	}
	s.check(InvDLAudit, res.Action == a && !res.Replayed, "dead letter %s: the %s answered %+v", it.ID, a, res)
	if lost {
		// The answer was lost: the operator sends the same action again.
		d.counts[string(DLLostAnswer)]++
		again, err := call(ctx, svc, op, a, req)
		s.check(InvDLAudit, err == nil && again.Replayed && again.Action == a, "dead letter %s: the repeat of a %s whose answer was lost answered %+v, %v", it.ID, a, again, err)
	}
	if second {
		// A second operator, with the same form, does the other action: 412, nothing done.
		d.counts[string(DLOtherAction)]++
		_, err := call(ctx, svc, dlOperators[1-opIdx], other(a), req)
		s.check(InvDLAudit, automation.CodeOf(err) == automation.CodePreconditionFailed, "dead letter %s was %s; the other action answered %v, want 412", it.ID, a, err)
	}
	inv := InvDLRequeued
	if a == store.DeadLetterDiscard {
		inv = InvDLDiscarded
	}
	s.check(inv, !listed(), "dead letter %s is still listed after its %s", it.ID, a)
	return a, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkDeadLetters (after the drain): the checks the operator's sessions made; every audit row
// matches what the bus did (one action, the same, per ETag) and every action the bus did has
// its audit row; no dead letter answered 409 stayed undone; a message whose last action was a
// requeue after the fix took effect, one whose last action was a discard never did.
func (c *checker) checkDeadLetters(ctx context.Context, r *report) error {
	s := c.dl
	if s == nil {
		return nil
	}
	for _, x := range s.checks {
		r.check(x.inv, x.ok, "%s", x.detail)
	}
	audit, err := queryAll(ctx, c, `SELECT ETag, Action FROM DeadLetterAudit ORDER BY ETag`, func(rs *sql.Rows) ([2]string, error) {
		var v [2]string
		err := rs.Scan(&v[0], &v[1])
		return v, err
	})
	if err != nil {
		return err
	}
	rows := map[string]string{}
	for _, a := range audit {
		rows[a[0]] = a[1]
		done := s.busDone[a[0]]
		r.check(InvDLAudit, len(done) == 1 && string(done[0]) == a[1], "audit row %s records a %s; the bus did %v", a[0], a[1], done)
	}
	for _, et := range sortedKeys(s.busDone) {
		done := s.busDone[et]
		r.check(InvDLAudit, len(done) == 1 && rows[et] == string(done[0]), "the bus did %v on dead letter %s; its audit row records %q", done, et, rows[et])
	}
	for _, et := range sortedKeys(s.conflicted) {
		r.check(InvDLNo409, len(s.busDone[et]) == 1 && rows[et] != "", "dead letter %s (message %s) was answered 409 and never acted on after (bus %v, audit %q)",
			et, s.conflicted[et], s.busDone[et], rows[et])
	}
	for _, id := range sortedKeys(s.last) {
		l := s.last[id]
		ev := s.events[id]
		n, err := c.count(ctx, fmt.Sprintf(`SELECT COUNT(*) FROM SourceSnapshot WHERE EntityType = 'ClassSession' AND EntityGuid = '%s' AND LastEventId = '%s'`, ev.entity, ev.id))
		if err != nil {
			return err
		}
		done := n > 0
		switch {
		case l.action == store.DeadLetterDiscard:
			r.check(InvDLDiscarded, !done, "message %s (event %s) was last discarded (dead letter %s) and took effect", id, ev.id, l.etag)
		case l.fixed && ev.unit == lateUnit:
			r.check(InvDLRequeued, done, "message %s (event %s) was requeued after the fix (dead letter %s) and never took effect", id, ev.id, l.etag)
		}
	}
	return nil
}
