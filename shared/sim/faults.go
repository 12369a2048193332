package sim

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/shared/trace"
)

// Kind names a fault kind (the -faults flag takes a comma-separated list, "all" or "none").
type Kind string

// Fault kinds. Adding one: a constant here, a line in AllKinds, the injection (a hook in
// app.Faults or a workload operation) and a row in docs/simulation.md.
const (
	// ClaimCrash: the process dies right after the poller claimed a batch (rows Processing
	// with a lease nobody will finish).
	ClaimCrash Kind = "claim-crash"
	// Lease: after a claim the clock jumps past the lease; a competing poller rescues the
	// rows, claims them again after their backoff and completes them; then the first worker
	// carries on with its stale Version token.
	Lease Kind = "lease"
	// SendCrash: the process dies after the channel call returned, before the outcome is
	// recorded (the send claim stays Sending; the next attempt is in doubt).
	SendCrash Kind = "send-crash"
	// RelayCrash: the process dies after the broker accepted the outbox messages, before
	// they are marked published (the next relay publishes them again).
	RelayCrash Kind = "relay-crash"
	// BusDuplicate: the broker delivers a relayed message twice (a second copy its duplicate
	// detection cannot catch, as after a lost lock).
	BusDuplicate Kind = "bus-dup"
	// BusDelay: the broker holds a relayed message and delivers it after later steps, with
	// other held messages in another order (delayed redelivery and reordering). The broker
	// is durable: a held message survives process restarts.
	BusDelay Kind = "bus-delay"
	// Restart: the process restarts between steps (every in-memory state is lost: the
	// in-process bus, caches), sometimes with a clock jump past the send-claim and
	// scheduler leases.
	Restart Kind = "restart"
	// Channel: channel fault windows in the workload: nothing arrives (fail), it arrives and
	// the answer is lost (timeout: effect applied), or the request is lost without answer
	// (lost: effect not applied).
	Channel Kind = "channel"
	// AttributeCrash: the process dies inside the attribute engine's transaction, between
	// the attribute update and the outbox write of its triggers (nothing may half-apply).
	AttributeCrash Kind = "attribute-crash"
	// CampaignCrash: the process dies after the campaign worker's provider call returned,
	// before its outcome is recorded (the command's lease expires; the next claim is in
	// doubt: looked up by its key, never sent blind).
	CampaignCrash Kind = "campaign-crash"
	// CampaignClaimCrash: the process dies after the campaign worker's batch claim committed
	// (CampaignWorker takes its commands in batches), before any of its commands runs: every
	// command of the batch stays RUNNING under its lease; each next claim is in doubt
	// (resent with the same key, looked up, or UNKNOWN), never a second blind call.
	CampaignClaimCrash Kind = "campaign-claim-crash"
	// ChargeCrash: the process dies after a billing call returned, before its answer is
	// recorded (the fee stays PENDING; the order is looked up by the same orderId).
	ChargeCrash Kind = "charge-crash"
	// BillingFail: a billing call fails with nothing charged (500).
	BillingFail Kind = "billing-fail"
	// BillingLost: a billing call charges, then loses its answer (the connection closes
	// unanswered: a timeout with the effect applied).
	BillingLost Kind = "billing-lost-answer"
	// EagerLost: the eager publish after a step's commits is lost (docs/performance.md,
	// "Publish on the commit path"): either its wake never comes or the process dies between
	// the commit and the eager publish. The rows are committed; the OutboxRelay timer, the
	// safety net, must publish them, each once per MessageId as consumers dedupe it.
	EagerLost Kind = "eager-lost"
	// StopCharge: the campaign is stopped while a billing call runs (once per run, on about
	// one charge in twenty-five): the confirmed fee stays charged and the action must never
	// reach the provider (stop-during-charge).
	StopCharge Kind = "stop-during-charge"
	// DestinationFull: a relay claim finds a destination full (its consumers hold their
	// share of the in-process bus, delivery.Relay.FullDestinations) and leaves its rows out,
	// inside the claim's range (issue 39). The rows stay unpublished and unleased; a later
	// claim takes them, each once per MessageId and in order within the destination.
	DestinationFull Kind = "destination-full"
	// PublishFail: the broker refuses one relayed message (a failed publish, nothing
	// accepted): the relay sets the row's RetryAt, and the later rows of its session
	// (destination and SessionID) wait behind it in the claim (issue 39 item 4, order per
	// session); every row is still published by the end, each applied once.
	PublishFail Kind = "publish-fail"
	// LateOptOut: the numbers of the preference plan's late set (preferences.go) opt out of
	// SMS in the middle of the run, each at the end of the first step that finds a delivery
	// to it created and not yet claimed (Queued, AttemptCount 0: none, or only quiet-hours
	// waits), so the opt-out falls between that delivery's creation and its first claim
	// (issue 38). The delivery's first claim after the opt-out then dies before its gate
	// (DispatchHooks.BeforeGate: the process is killed, as when another send of its batch
	// crashed), so it is taken over in doubt, and SMS being idempotent, the takeover is a
	// resend: never-to-opted-out holds it to the first-claim rule (Skipped, never sent).
	LateOptOut Kind = "late-opt-out"
	// DLCrash: an operator's requeue or discard of a dead letter dies between its audit row
	// and the bus call (the API process dies; the bus lives on). The operator's immediate
	// repeat is answered 409; back after deadletter.AbandonedAfter (the clock jumps), the
	// action takes the died one over and completes it (deadletters.go).
	DLCrash Kind = "deadletter-crash"
	// DLRefused: the bus refuses an operator's requeue or discard: nothing done, the audit
	// row withdrawn; the operator tries again or leaves it listed.
	DLRefused Kind = "deadletter-refused"
	// DLLostAnswer: the answer to an operator's requeue or discard is lost; the operator
	// sends the same action again with the same etag: replayed, nothing done twice.
	DLLostAnswer Kind = "deadletter-lost-answer"
	// DLOtherAction: after an operator's action, a second operator, with the same form,
	// does the other action (discard after requeue, or requeue after discard): 412.
	DLOtherAction Kind = "deadletter-other-action"
)

// AllKinds lists every fault kind.
var AllKinds = []Kind{ClaimCrash, Lease, SendCrash, RelayCrash, BusDuplicate, BusDelay, Restart, Channel, AttributeCrash,
	CampaignCrash, ChargeCrash, BillingFail, BillingLost, EagerLost, StopCharge, DestinationFull, PublishFail, LateOptOut, CampaignClaimCrash,
	DLCrash, DLRefused, DLLostAnswer, DLOtherAction}

// ParseKinds reads a -faults value: "all", "none" or a comma-separated list of kinds.
func ParseKinds(s string) (map[Kind]bool, error) {
	out := map[Kind]bool{}
	switch strings.TrimSpace(s) {
	case "", "all":
		for _, k := range AllKinds {
			out[k] = true
		}
		return out, nil
	case "none":
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		k := Kind(strings.TrimSpace(part))
		if k == "all" || k == "none" {
			return nil, fmt.Errorf("sim: %q must stand alone, not in a list of kinds (%q)", k, s)
		}
		ok := false
		for _, a := range AllKinds {
			ok = ok || a == k
		}
		if !ok {
			var names []string
			for _, a := range AllKinds {
				names = append(names, string(a))
			}
			return nil, fmt.Errorf("sim: unknown fault kind %q (one of %s, all, none)", k, strings.Join(names, ", "))
		}
		out[k] = true
	}
	return out, nil
}

// KindsString is the -faults value of kinds, in AllKinds order.
func KindsString(kinds map[Kind]bool) string {
	if len(kinds) == len(AllKinds) {
		return "all"
	}
	var names []string
	for _, k := range AllKinds {
		if kinds[k] {
			names = append(names, string(k))
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}

// Fault probabilities per opportunity (a hook call, a relayed message, a step).
const (
	pClaimCrash = 0.04
	pLease      = 0.04
	pSendCrash  = 0.04
	pRelayCrash = 0.04
	pDuplicate  = 0.06
	pDelay      = 0.06
	pRestart    = 0.015
	pAttrCrash  = 0.08
	// campaign-crash and charge-crash per call; billing-fail and billing-lost-answer per
	// billing request (create or lookup).
	pCampaignCrash = 0.06
	pChargeCrash   = 0.08
	pStopCharge    = 0.04
	pBillingFail   = 0.15
	pBillingLost   = 0.15
	// eager-lost per step, when the eager publisher runs (the kind is on).
	pEagerLost = 0.1
	// destination-full per relay claim.
	pDestinationFull = 0.25
	// publish-fail per relayed message.
	pPublishFail = 0.03
	// campaign-claim-crash per batch claim of the campaign worker.
	pCampaignClaimCrash = 0.06
)

// errPublishRefused is the broker's answer to a publish the publish-fail fault refused.
var errPublishRefused = errors.New("sim: the broker refused the publish (publish-fail)")

// errCrash is what a fault point returns when it killed the process.
var errCrash = errors.New("sim: process crashed at a fault point")

// driver is the simulator's replay.Driver: it injects the faults, restarts crashed
// processes, checks the invariants at quiescent points and drains the pipeline at the end.
type driver struct {
	w     *Workload
	kinds map[Kind]bool
	rng   *rand.Rand
	// fullRng draws destination-full on its own stream, so the other faults of a seed stay
	// what they were without it.
	fullRng *rand.Rand
	// failRng draws publish-fail on its own stream, for the same reason.
	failRng *rand.Rand
	// claimRng draws campaign-claim-crash on its own stream, for the same reason.
	claimRng *rand.Rand
	counts   map[string]int // faults injected, by kind (and sub-kind)
	chk      *checker

	rt      *app.Runtime
	pump    *delivery.Pump // the eager publisher, run after each step when eager-lost is on
	kill    func()
	clock   *automation.ManualClock
	pub     bus.Publisher // the current process's relay publisher (under the fault wrapper)
	crashed bool
	refused int  // publishes publish-fail refused in this step
	nested  bool // a competing poller runs inside a hook: no faults there
	off     bool // faults off (the final drain)
	held    []bus.Message
	// competing: rows a competing poller claimed inside the lease fault and executes when
	// the step ends.
	competing []automation.SchedulerRow
	steps     int
	// The billing server's faults are drawn on its request goroutines (budgets.go):
	// billingAsked counts requests per operation and key, billingCounts the faults;
	// billingOff turns them off for the drain.
	bmu           sync.Mutex
	billingAsked  map[string]int
	billingCounts map[string]int
	billingOff    atomic.Bool
	// dl: the dead-letter operator (deadletters.go), on its own random stream.
	dl *dlState
}

func newDriver(w *Workload, kinds map[Kind]bool, chk *checker) *driver {
	return &driver{w: w, kinds: kinds, rng: rand.New(rand.NewPCG(w.Seed, 0xfa017fa017)), fullRng: rand.New(rand.NewPCG(w.Seed, 0xf0110f011)),
		failRng: rand.New(rand.NewPCG(w.Seed, 0xfa11ed0ff)), claimRng: rand.New(rand.NewPCG(w.Seed, 0xc1a1c7a54)), counts: map[string]int{}, chk: chk,
		billingAsked: map[string]int{}, billingCounts: map[string]int{}, dl: chk.dl}
}

func (d *driver) roll(k Kind, p float64) bool {
	return !d.off && !d.nested && d.kinds[k] && d.rng.Float64() < p
}

// Faults implements replay.Driver.
func (d *driver) Faults() *app.Faults {
	return &app.Faults{
		Scheduler: &scheduler.Hooks{AfterClaim: d.afterClaim},
		Dispatch:  &delivery.DispatchHooks{AfterSend: d.afterSend, BeforeGate: d.beforeGate},
		Relay:     &delivery.RelayHooks{AfterPublish: d.afterPublish},
		Publisher: func(p bus.Publisher) bus.Publisher { d.pub = p; return faultyPublisher{d: d} },
		Attribute: &attribute.Hooks{AfterUpdate: d.afterAttributeUpdate},
		Campaign:  &campaign.WorkerHooks{AfterCall: d.afterCampaignCall, AfterBatchClaim: d.afterCampaignBatchClaim},
		Budget:    &budget.Hooks{AfterCharge: d.afterCharge},
	}
}

// Started implements replay.Driver.
func (d *driver) Started(rt *app.Runtime, kill func()) {
	d.rt, d.kill = rt, kill
	d.clock, _ = rt.Clock.(*automation.ManualClock)
	if err := d.applyPreferences(context.Background()); err != nil && d.chk.prefErr == nil {
		d.chk.prefErr = err
	}
	if d.kinds[DestinationFull] && rt.Relay != nil {
		rt.Relay.FullDestinations = d.fullDestinations(rt.Relay.FullDestinations)
	}
	d.pump = nil
	if d.kinds[EagerLost] {
		// The eager publisher, run synchronously after each step (deterministic): the
		// production pump's drain, without its goroutine.
		d.pump = delivery.NewPump(rt.Relay)
	}
}

// fullDestinations wraps the relay's FullDestinations (full: the runtime's, nil on a bus
// without shares) with the destination-full fault: on about one claim in four, one of the
// app's destinations (a queue or a topic) is full as well.
func (d *driver) fullDestinations(full func() []string) func() []string {
	var names []string
	for _, q := range topology.Queues() {
		names = append(names, q)
	}
	for _, s := range topology.Subscriptions() {
		if !slices.Contains(names, s.Topic) {
			names = append(names, s.Topic)
		}
	}
	return func() []string {
		var out []string
		if full != nil {
			out = full()
		}
		if d.off || d.nested || d.fullRng.Float64() >= pDestinationFull {
			return out
		}
		name := names[d.fullRng.IntN(len(names))]
		d.counts[string(DestinationFull)]++
		if slices.Contains(out, name) {
			return out
		}
		return append(out, name)
	}
}

func (d *driver) crash(k Kind) error {
	d.counts[string(k)]++
	d.crashed = true
	d.kill()
	return errCrash
}

func (d *driver) afterClaim(ctx context.Context, rows []automation.SchedulerRow) error {
	if d.roll(ClaimCrash, pClaimCrash) {
		return d.crash(ClaimCrash)
	}
	if d.clock != nil && d.roll(Lease, pLease) {
		d.counts[string(Lease)]++
		d.nested = true
		defer func() { d.nested = false }()
		// Past the lease: a competing poller rescues the rows (LeaseExpired, backoff about
		// 5 min), and after the backoff claims them again and holds them, live, while this
		// worker carries on with its stale Version token. The competitor executes them when
		// the step ends (After), still within its lease.
		d.clock.Advance(scheduler.DefaultBackoff[0] + 2*time.Minute)
		if _, _, err := d.rt.Poller.Claim(ctx); err != nil {
			return fmt.Errorf("sim: competing poller (rescue): %w", err)
		}
		d.clock.Advance(scheduler.DefaultBackoff[0] + time.Minute)
		_, rows, err := d.rt.Poller.Claim(ctx)
		if err != nil {
			return fmt.Errorf("sim: competing poller (claim): %w", err)
		}
		d.competing = append(d.competing, rows...)
	}
	return nil
}

// beforeGate (LateOptOut): the first claim of an sms delivery to a number that opted out
// in the middle of the run, taken at or after the opt-out, dies before its gate (once per
// delivery); the checker then holds the delivery to Skipped, never sent.
func (d *driver) beforeGate(_ context.Context, job store.NotificationJob, inDoubt bool) error {
	if d.off || d.nested || !d.kinds[LateOptOut] || inDoubt || job.Channel != "sms" || job.AttemptCount != 1 || job.FirstClaimedOn == nil {
		return nil
	}
	at, late := d.chk.lateOptOut[job.Recipient]
	if !late || job.FirstClaimedOn.Before(at) || d.chk.lateCrashed[job.DeliveryKey] {
		return nil
	}
	if d.chk.lateCrashed == nil {
		d.chk.lateCrashed = map[string]bool{}
	}
	d.chk.lateCrashed[job.DeliveryKey] = true
	d.counts["late-opt-out-crash"]++
	d.crashed = true
	d.kill()
	return errCrash
}

func (d *driver) afterSend(context.Context, store.NotificationJob, error) error {
	if d.roll(SendCrash, pSendCrash) {
		return d.crash(SendCrash)
	}
	return nil
}

func (d *driver) afterAttributeUpdate(context.Context, string) error {
	if d.roll(AttributeCrash, pAttrCrash) {
		return d.crash(AttributeCrash)
	}
	return nil
}

func (d *driver) afterCampaignCall(context.Context, store.CampaignCommand, error) error {
	if d.roll(CampaignCrash, pCampaignCrash) {
		return d.crash(CampaignCrash)
	}
	return nil
}

// afterCampaignBatchClaim is campaign-claim-crash, drawn on its own stream.
func (d *driver) afterCampaignBatchClaim(context.Context, []store.CampaignCommand) error {
	if !d.off && !d.nested && d.kinds[CampaignClaimCrash] && d.claimRng.Float64() < pCampaignClaimCrash {
		return d.crash(CampaignClaimCrash)
	}
	return nil
}

func (d *driver) afterCharge(ctx context.Context, orderID string, callErr error) error {
	if d.roll(ChargeCrash, pChargeCrash) {
		return d.crash(ChargeCrash)
	}
	if callErr == nil && d.stopDuringCharge(orderID) {
		if err := d.stopCampaign(ctx); err != nil {
			return err
		}
		d.counts[string(StopCharge)]++
		d.chk.stoppedOrders = append(d.chk.stoppedOrders, orderID)
	}
	return nil
}

// stopDuringCharge draws whether the campaign is stopped during this billing call: once per
// run, on about one order in twenty-five. The draw hashes the seed and the order (not the
// driver's random stream, so the other faults of a seed stay what they were).
func (d *driver) stopDuringCharge(orderID string) bool {
	if !d.kinds[StopCharge] || d.off || d.nested || len(d.chk.stoppedOrders) > 0 {
		return false
	}
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], d.w.Seed)
	h.Write(b[:])
	h.Write([]byte("stop " + orderID))
	return float64(h.Sum64()>>11)/(1<<53) < pStopCharge
}

// stopCampaign stops the budget's campaign as an operator would (its definition saved with
// status STOPPED), while the worker is inside the charge.
func (d *driver) stopCampaign(ctx context.Context) error {
	for range 5 {
		var bu string
		for _, u := range d.w.Units {
			if c, err := d.rt.Store.CampaignGet(ctx, u.ID, budgetCampaign); err == nil {
				bu = u.ID
				var def campaign.Definition
				if err := json.Unmarshal([]byte(c.DefinitionJSON), &def); err != nil {
					return err
				}
				def.Status = store.CampaignStopped
				v := c.Version
				if _, err := d.rt.Campaigns.Save(ctx, bu, budgetCampaign, def, &v); automation.CodeOf(err) != automation.CodePreconditionFailed {
					return err
				}
				break
			}
		}
		if bu == "" {
			return nil
		}
	}
	return fmt.Errorf("sim: stopping %s: the campaign kept changing", budgetCampaign)
}

func (d *driver) afterPublish(context.Context, []int64) error {
	if d.roll(RelayCrash, pRelayCrash) {
		return d.crash(RelayCrash)
	}
	return nil
}

// faultyPublisher is the broker as the simulator sees it: it may deliver a message twice
// or hold it for later.
type faultyPublisher struct{ d *driver }

func (p faultyPublisher) Publish(ctx context.Context, m bus.Message) error {
	d := p.d
	if !d.off && !d.nested && d.kinds[PublishFail] && d.failRng.Float64() < pPublishFail {
		d.counts[string(PublishFail)]++
		d.refused++
		return errPublishRefused
	}
	d.chk.noteTrigger(m.Destination, m.Body)
	if d.roll(BusDelay, pDelay) {
		d.counts[string(BusDelay)]++
		m.Body = append([]byte(nil), m.Body...)
		d.held = append(d.held, m)
		return nil
	}
	if err := d.pub.Publish(ctx, m); err != nil {
		return err
	}
	if d.roll(BusDuplicate, pDuplicate) {
		d.counts[string(BusDuplicate)]++
		dup := m
		dup.ID = m.ID + "~redelivered"
		return d.pub.Publish(ctx, dup)
	}
	return nil
}

// release delivers the held messages, shuffled, to the current process and drains its bus.
func (d *driver) release(ctx context.Context) error {
	if len(d.held) == 0 {
		return nil
	}
	msgs := d.held
	d.held = nil
	if len(msgs) > 1 {
		d.counts["bus-reorder"]++
		d.rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
	}
	for _, m := range msgs {
		if err := d.pub.Publish(ctx, m); err != nil {
			return fmt.Errorf("sim: release %s: %w", m.ID, err)
		}
	}
	if d.rt.Memory == nil {
		return nil
	}
	_, err := d.rt.Memory.Drain(ctx, 0)
	if d.crashed {
		return nil
	}
	return err
}

// After implements replay.Driver: restart a crashed process (sometimes past the leases),
// fail on a real step error, release held messages, restart at random, and check the
// invariants at quiescent points.
func (d *driver) After(ctx context.Context, now time.Time, stepErr error) (bool, error) {
	d.steps++
	if !d.crashed && stepErr != nil && d.refused > 0 && strings.Contains(stepErr.Error(), errPublishRefused.Error()) {
		// The relay reported the publish the fault refused (the OutboxRelay timer answers
		// 500, as the Functions host sees it): the row waits for its RetryAt, which the
		// next ticks and the final drain reach.
		stepErr = nil
	}
	d.refused = 0
	if !d.crashed && stepErr != nil {
		return false, fmt.Errorf("step at %s: %w", now.Format(time.RFC3339), stepErr)
	}
	if d.crashed {
		d.competing = nil // the competitor shared the process
	}
	if err := d.compete(ctx); err != nil {
		return false, err
	}
	if !d.crashed && len(d.held) > 0 && d.rng.IntN(2) == 0 {
		if err := d.release(ctx); err != nil {
			return false, err
		}
	}
	if err := d.eager(ctx); err != nil {
		return false, err
	}
	if err := d.lateOptOuts(ctx); err != nil {
		return false, err
	}
	if err := d.operate(ctx); err != nil {
		return false, err
	}
	restart := d.crashed
	if !restart && d.roll(Restart, pRestart) {
		d.counts[string(Restart)]++
		restart = true
	}
	if restart {
		d.crashed = false
		if d.clock != nil && d.rng.IntN(2) == 0 {
			d.counts["lease-expiry-jump"]++
			d.clock.Advance(time.Duration(3+d.rng.IntN(8)) * time.Minute)
		}
		return true, nil
	}
	if d.steps%20 == 0 {
		if err := d.chk.quiescent(ctx, d.clock.Now()); err != nil {
			return false, err
		}
	}
	return false, nil
}

// Finish implements replay.Driver: with faults off, deliver what the broker still holds
// and run the pipeline until nothing is due up to a horizon past the workload's end, then
// check every invariant.
func (d *driver) Finish(ctx context.Context, rt *app.Runtime) error {
	if d.dl != nil && len(d.dl.died) > 0 && !d.off {
		// A dead-letter action died with the last step's process: take it over first (and
		// only that: no new action, whose fault could die with no session after it).
		d.dl.takeOverOnly = true
		if err := d.operate(ctx); err != nil {
			return err
		}
	}
	d.off = true
	d.billingOff.Store(true)
	for _, k := range []Kind{BusDelay, Restart, ClaimCrash, SendCrash, RelayCrash, AttributeCrash} {
		d.chk.reordered = d.chk.reordered || d.counts[string(k)] > 0
	}
	if err := d.compete(ctx); err != nil {
		return err
	}
	if err := d.release(ctx); err != nil {
		return err
	}
	horizon := d.w.Until.Add(3 * 24 * time.Hour)
	for i := 0; i < 5000; i++ {
		now := d.clock.Now()
		wake, busy, err := d.chk.nextWork(ctx, rt)
		if err != nil {
			return err
		}
		if !busy && (wake == nil || wake.After(horizon)) {
			break
		}
		next := now.Add(time.Minute)
		if !busy && wake != nil && wake.After(next) {
			next = *wake
		}
		if next.After(horizon) {
			break
		}
		d.clock.Set(next)
		if _, err := rt.Tick(ctx); err != nil {
			return fmt.Errorf("drain tick %s: %w", next.Format(time.RFC3339), err)
		}
	}
	return d.chk.final(ctx, d.clock.Now())
}

// compete executes the competing poller's rows. Its claim is live (the clock has not moved
// since it claimed them), so a write it loses means a stale token overwrote a live claim.
func (d *driver) compete(ctx context.Context) error {
	rows := d.competing
	d.competing = nil
	r := &report{c: d.chk}
	for _, row := range rows {
		o, err := d.rt.Poller.Execute(ctx, row)
		if err != nil {
			return fmt.Errorf("sim: competing poller (execute %s): %w", row.SchedulerKey, err)
		}
		live := row.ProcessingLeaseExpiresOn != nil && d.clock.Now().Before(*row.ProcessingLeaseExpiresOn)
		r.check(InvFencing, !(live && o == trace.OutcomeLeaseLost), "row %s: the claim of Version %d, live until %s, was overwritten by a stale token",
			row.SchedulerKey, row.Version, row.ProcessingLeaseExpiresOn.Format(time.RFC3339))
	}
	return r.err()
}

// Counts returns the faults injected by kind, sorted by name.
func sortedCounts(m map[string]int) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(out)
	return out
}

// eager runs the eager publisher after a step (Pump.DrainOnce, then the bus delivers), or,
// with the eager-lost fault, loses it: the wake never comes, or the process dies between
// the step's commits and the eager publish. Either way the rows it would have published
// are noted for the eager-lost-published invariant.
func (d *driver) eager(ctx context.Context) error {
	if d.pump == nil || d.crashed || d.off {
		return nil
	}
	if d.roll(EagerLost, pEagerLost) {
		d.counts[string(EagerLost)]++
		if err := d.chk.noteEagerLost(ctx); err != nil {
			return err
		}
		if d.rng.IntN(2) == 0 {
			d.counts["eager-lost-crash"]++
			d.crashed = true
			d.kill()
		}
		return nil
	}
	d.pump.DrainOnce(ctx)
	if d.crashed || d.rt.Memory == nil {
		return nil // a relay-crash inside the eager drain
	}
	_, err := d.rt.Memory.Drain(ctx, 0)
	if d.crashed {
		return nil
	}
	return err
}
