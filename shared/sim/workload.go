package sim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/automation-platform/automation/shared/localtime"
)

// Workload is one generated history: the business units and settings at the start, and the
// timed operations (Ops) the replay applies. It is a pure function of the seed (Generate);
// shrinking removes operations and keeps the rest as they were.
type Workload struct {
	Seed       uint64
	Start      time.Time // UTC
	Until      time.Time // UTC, the last instant the replay runs inputs and ticks
	Units      []Unit
	Dates      []DateSetting
	Thresholds []ThresholdSetting
	Ops        []Op // in arrival order (At ascending, stable)
	// Providers: the simulated action providers of the scenario (campaignProviders).
	Providers []map[string]any
	// Billing: the scenario's billing section (the simulated billing server's balances, the
	// price policies and the campaign's budget; budgets.go), nil without a campaign.
	Billing map[string]any
}

// Unit is a business unit and its IANA zone.
type Unit struct {
	ID, Zone string
}

// DateSetting is a date-based reminder setting as the generator made it (its values at the
// start; Ops change the send time or deactivate it).
type DateSetting struct {
	Guid, Unit, SourceType, TriggerKey, RecipientField, Channel string
	Offsets                                                     []int  // days before the target
	SendTime                                                    string // "HH:MM" local
}

// ThresholdSetting is a OncePerThreshold percentage setting (booked of capacity, no send
// window: a reached level is due at once).
type ThresholdSetting struct {
	Guid, Unit string
	Levels     []int // percent
}

// OpKind names an operation.
type OpKind string

// Operation kinds. A later capability adds its kinds here, their scenario input in
// (Workload).input and their expectations in the oracle.
const (
	OpEvent      OpKind = "event"      // a source upsert (date-based or threshold)
	OpDelete     OpKind = "delete"     // a source deletion
	OpSendTime   OpKind = "sendTime"   // a setting's send time changes
	OpDeactivate OpKind = "deactivate" // a setting is deactivated
	OpFault      OpKind = "fault"      // a channel fault window (fail, timeout, lost)
	OpReport     OpKind = "report"     // a report input (rollout, subscription, run-now)
	OpRegistry   OpKind = "registry"   // the gateway's registry
	OpIngest     OpKind = "ingest"     // a gateway batch of NOTIFICATION events
	OpCampaign   OpKind = "campaign"   // a campaign definition (PUT /api/campaigns)
	OpBudget     OpKind = "budget"     // a campaign's maxCost changes (support raises it)
)

// Op is one timed operation.
type Op struct {
	At   time.Time
	Kind OpKind
	// Source events: the event id (a duplicate repeats it), the entity and its revision.
	EventID, SourceType, Source, Unit string
	Revision                          int
	Date                              string // the target date of a date-based source
	Booked, Capacity                  int    // a threshold source's metric
	Email                             string // recipient value (e-mail or webhook URL)
	// Setting changes.
	Setting, SendTime string
	// Channel faults.
	Channel, Mode string
	FaultUntil    time.Time
	// Report and gateway inputs, as scenario JSON; Redeems: the gateway events, by their
	// identity (source, id).
	Raw     json.RawMessage
	Redeems []EventRef
	// Visits: the loyalty events of an ingest batch (loyalty.go); Joins: its campaign
	// trigger events (campaigns.go).
	Visits []Visit
	Joins  []string
	// MaxCost: a budget operation's new maxCost (minor units of the budget's currency).
	MaxCost int64
}

// zones are the business units' zones: both hemispheres, half-hour DST (Lord Howe), DST at
// midnight (Santiago), none (Ho Chi Minh City, Kolkata).
var zones = []string{"Australia/Sydney", "Asia/Ho_Chi_Minh", "America/New_York", "Europe/London",
	"Australia/Lord_Howe", "Pacific/Auckland", "America/Santiago", "Asia/Kolkata"}

// sendTimes include times in spring-forward gaps and fall-back overlaps of those zones.
var sendTimes = []string{"09:00", "02:30", "01:30", "00:15", "23:45", "02:00", "01:00"}

// Generate builds the workload of seed: 2–3 business units in distinct zones, date-based
// settings (log channel) and webhook settings, threshold settings, sources with revisions
// that move dates, duplicates, out-of-order arrivals and deletions, settings changes, channel
// fault windows, a report subscription with run-now and gateway batches. Same seed, same
// workload.
func Generate(seed uint64) *Workload {
	rng := rand.New(rand.NewPCG(seed, 0x5eed5eed5eed5eed))
	w := &Workload{Seed: seed}
	base := time.Date(2026, 9, 20, 0, 0, 0, 0, time.UTC)
	w.Start = base.AddDate(0, 0, rng.IntN(210))
	w.Until = w.Start.Add(40 * 24 * time.Hour)
	perm := rng.Perm(len(zones))
	nUnits := 2 + rng.IntN(2)
	for i := 0; i < nUnits; i++ {
		w.Units = append(w.Units, Unit{ID: fmt.Sprintf("bu-%d", i+1), Zone: zones[perm[i]]})
	}
	uid := func(kind, n int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", seed&0xffffffff, kind<<32|n) }
	n := 0
	next := func() int { n++; return n }
	at := func(from time.Time, maxHours int) time.Time {
		return from.Add(time.Duration(rng.IntN(maxHours*60)+1) * time.Minute)
	}
	for _, u := range w.Units {
		offs := []int{14, 7, 1, 0}
		var chosen []int
		for _, o := range offs {
			if rng.IntN(2) == 0 {
				chosen = append(chosen, o)
			}
		}
		if len(chosen) == 0 {
			chosen = []int{0}
		}
		w.Dates = append(w.Dates, DateSetting{Guid: uid(1, next()), Unit: u.ID, SourceType: "PoliceVetting", TriggerKey: "expiresOn",
			RecipientField: "staffEmail", Channel: "log", Offsets: chosen, SendTime: sendTimes[rng.IntN(len(sendTimes))]})
		if rng.IntN(2) == 0 {
			w.Dates = append(w.Dates, DateSetting{Guid: uid(1, next()), Unit: u.ID, SourceType: "Contract", TriggerKey: "endsOn",
				RecipientField: "callbackUrl", Channel: "webhook", Offsets: []int{rng.IntN(3)}, SendTime: sendTimes[rng.IntN(len(sendTimes))]})
		}
		if rng.IntN(2) == 0 {
			w.Thresholds = append(w.Thresholds, ThresholdSetting{Guid: uid(2, next()), Unit: u.ID, Levels: []int{50, 100}})
		}
	}
	zone := map[string]*time.Location{}
	for _, u := range w.Units {
		zone[u.ID] = mustZone(u.Zone)
	}
	// Date-based sources: 2–5 per setting's source type and unit.
	for _, s := range w.Dates {
		for k := 1 + rng.IntN(4); k >= 0; k-- {
			src := uid(3, next())
			email := fmt.Sprintf("staff%d@example.test", n)
			if s.Channel == "webhook" {
				email = fmt.Sprintf("https://hooks.example.test/%s/%d", s.Unit, n)
			}
			t := at(w.Start, 20*24)
			local := t.In(zone[s.Unit])
			day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, time.UTC)
			var evs []Op
			rev := 1
			date := day.AddDate(0, 0, 1+rng.IntN(25))
			evs = append(evs, Op{At: t, Kind: OpEvent, SourceType: s.SourceType, Source: src, Unit: s.Unit, Revision: rev, Date: date.Format(time.DateOnly), Email: email})
			for extra := rng.IntN(4); extra > 0; extra-- {
				t = at(t, 5*24)
				rev++
				switch rng.IntN(4) {
				case 0, 1: // a date move (forward or back)
					date = date.AddDate(0, 0, rng.IntN(15)-5)
					evs = append(evs, Op{At: t, Kind: OpEvent, SourceType: s.SourceType, Source: src, Unit: s.Unit, Revision: rev, Date: date.Format(time.DateOnly), Email: email})
				case 2: // the same data again (a new revision that changes nothing)
					evs = append(evs, Op{At: t, Kind: OpEvent, SourceType: s.SourceType, Source: src, Unit: s.Unit, Revision: rev, Date: date.Format(time.DateOnly), Email: email})
				case 3: // deleted: the last revision
					evs = append(evs, Op{At: t, Kind: OpDelete, SourceType: s.SourceType, Source: src, Unit: s.Unit, Revision: rev})
					extra = 1
				}
			}
			w.Ops = append(w.Ops, w.disorder(rng, evs)...)
		}
	}
	// Threshold sources: bookings rising (and sometimes falling) over revisions.
	for _, s := range w.Thresholds {
		for k := rng.IntN(3); k >= 0; k-- {
			src := uid(4, next())
			t := at(w.Start, 20*24)
			capacity := 10 * (1 + rng.IntN(4))
			booked := rng.IntN(capacity/2 + 1)
			var evs []Op
			for rev := 1; rev <= 1+rng.IntN(5); rev++ {
				evs = append(evs, Op{At: t, Kind: OpEvent, SourceType: "ClassSession", Source: src, Unit: s.Unit, Revision: rev,
					Booked: booked, Capacity: capacity, Email: fmt.Sprintf("coach%d@example.test", n)})
				t = at(t, 3*24)
				booked = min(capacity, max(0, booked+rng.IntN(capacity/2+1)-capacity/8))
			}
			w.Ops = append(w.Ops, w.disorder(rng, evs)...)
		}
	}
	// Settings changes: a new send time (pending rows move in place), a deactivation.
	for _, s := range w.Dates {
		if rng.IntN(10) < 3 {
			w.Ops = append(w.Ops, Op{At: at(w.Start, 30*24), Kind: OpSendTime, Setting: s.Guid, SendTime: sendTimes[rng.IntN(len(sendTimes))]})
		}
		if rng.IntN(10) < 2 {
			w.Ops = append(w.Ops, Op{At: at(w.Start, 35*24), Kind: OpDeactivate, Setting: s.Guid})
		}
	}
	// Channel fault windows: nothing arrives (fail), it arrives but the answer is lost
	// (timeout), or the request is lost with no answer (lost).
	for k := rng.IntN(4); k > 0; k-- {
		from := at(w.Start, 38*24)
		ch := []string{"log", "webhook"}[rng.IntN(2)]
		mode := []string{"fail", "timeout", "lost"}[rng.IntN(3)]
		w.Ops = append(w.Ops, Op{At: from, Kind: OpFault, Channel: ch, Mode: mode, FaultUntil: from.Add(time.Duration(10+rng.IntN(110)) * time.Minute)})
	}
	if rng.IntN(2) == 0 {
		w.reports(rng, uid(5, next()))
	}
	if rng.IntN(2) == 0 {
		w.gateway(rng)
	}
	// Drawn last, so the histories of earlier capabilities stay as they were for a seed.
	if rng.IntN(2) == 0 {
		w.loyalty(rng)
	}
	if rng.IntN(2) == 0 {
		w.campaigns(rng)
	}
	w.sms(seed, zone)
	w.poison(seed)
	sort.SliceStable(w.Ops, func(a, b int) bool { return w.Ops[a].At.Before(w.Ops[b].At) })
	return w
}

// sms adds the sms channel's part (docs/channels.md#sms): per unit, half the time, a
// date-based setting on the sms channel with 1–3 sources whose recipient is an E.164 mobile
// number, some moving their date once; and 0–2 fault windows on the sms channel. It draws
// from its own generator and its own ids, so the rest of a seed's workload is what it was
// before the sms part existed.
func (w *Workload) sms(seed uint64, zone map[string]*time.Location) {
	rng := rand.New(rand.NewPCG(seed, 0x5a5a0000005a5a00))
	n := 0
	uid := func(kind int) string {
		n++
		return fmt.Sprintf("%08x-0000-4000-8000-%012x", seed&0xffffffff, (kind+8)<<32|n)
	}
	at := func(from time.Time, maxHours int) time.Time {
		return from.Add(time.Duration(rng.IntN(maxHours*60)+1) * time.Minute)
	}
	for _, u := range w.Units {
		if rng.IntN(2) != 0 {
			continue
		}
		s := DateSetting{Guid: uid(1), Unit: u.ID, SourceType: "Membership", TriggerKey: "renewsOn", RecipientField: "mobile", Channel: "sms",
			Offsets: []int{rng.IntN(3)}, SendTime: sendTimes[rng.IntN(len(sendTimes))]}
		w.Dates = append(w.Dates, s)
		for k := rng.IntN(3); k >= 0; k-- {
			src := uid(3)
			mobile := fmt.Sprintf("+6141%07d", n) // an Australian mobile number (E.164)
			t := at(w.Start, 20*24)
			local := t.In(zone[s.Unit])
			date := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1+rng.IntN(25))
			evs := []Op{{At: t, Kind: OpEvent, SourceType: s.SourceType, Source: src, Unit: s.Unit, Revision: 1, Date: date.Format(time.DateOnly), Email: mobile}}
			if rng.IntN(3) == 0 {
				date = date.AddDate(0, 0, rng.IntN(15)-5)
				evs = append(evs, Op{At: at(t, 5*24), Kind: OpEvent, SourceType: s.SourceType, Source: src, Unit: s.Unit, Revision: 2, Date: date.Format(time.DateOnly), Email: mobile})
			}
			w.Ops = append(w.Ops, w.disorder(rng, evs)...)
		}
	}
	for k := rng.IntN(3); k > 0; k-- {
		from := at(w.Start, 38*24)
		mode := []string{"fail", "timeout", "lost"}[rng.IntN(3)]
		w.Ops = append(w.Ops, Op{At: from, Kind: OpFault, Channel: "sms", Mode: mode, FaultUntil: from.Add(time.Duration(10+rng.IntN(110)) * time.Minute)})
	}
}

// disorder gives each source event its id and adds the bus's disorder: a duplicate of an
// earlier event later, or two consecutive revisions arriving in the wrong order.
func (w *Workload) disorder(rng *rand.Rand, evs []Op) []Op {
	for i := range evs {
		evs[i].EventID = fmt.Sprintf("ev-%s-%d", evs[i].Source[len(evs[i].Source)-6:], evs[i].Revision)
	}
	if len(evs) >= 2 && rng.IntN(3) == 0 {
		i := rng.IntN(len(evs) - 1)
		evs[i].At, evs[i+1].At = evs[i+1].At, evs[i].At
	}
	if rng.IntN(3) == 0 {
		d := evs[rng.IntN(len(evs))]
		d.At = d.At.Add(time.Duration(1+rng.IntN(48*60)) * time.Minute)
		evs = append(evs, d)
	}
	return evs
}

// reports adds a weekly report subscription in the first unit with its rollout and one or
// two run-now requests (the second repeating the first's Idempotency-Key).
func (w *Workload) reports(rng *rand.Rand, guid string) {
	u := w.Units[0]
	t := w.Start.Add(time.Hour)
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	w.Ops = append(w.Ops, Op{At: t, Kind: OpReport, Raw: raw(map[string]any{"reportRollout": map[string]any{"businessUnitId": u.ID, "mode": "Cutover"}})})
	start := t.In(mustZone(u.Zone)).AddDate(0, 0, 1)
	w.Ops = append(w.Ops, Op{At: t, Kind: OpReport, Raw: raw(map[string]any{"reportSubscription": map[string]any{
		"guid": guid, "businessUnitId": u.ID, "name": "Weekly activity", "reportType": "automation-activity",
		"recurrence": map[string]any{"rrule": "FREQ=WEEKLY;BYDAY=MO", "dtStart": start.Format("2006-01-02") + "T08:00"},
		"format":     "csv", "delivery": "link", "template": "report-ready", "channels": []string{"log"},
		"recipients": []string{"ops@example.test"}}})})
	key := fmt.Sprintf("run-now-%d", rng.IntN(1000))
	runNow := func(at time.Time) Op {
		return Op{At: at, Kind: OpReport, Raw: raw(map[string]any{"reportRunNow": map[string]any{"subscriptionGuid": guid,
			"idempotencyKey": key, "operator": "ops@example.test", "body": map[string]any{"reason": "simulation"}}})}
	}
	first := w.Start.Add(time.Duration(2+rng.IntN(30*24)) * time.Hour)
	w.Ops = append(w.Ops, runNow(first))
	if rng.IntN(2) == 0 {
		w.Ops = append(w.Ops, runNow(first.Add(time.Duration(1+rng.IntN(120))*time.Minute)))
	}
}

// EventRef is an event's identity: CloudEvents' (source, id).
type EventRef struct{ Source, ID string }

// FullBatch is the most events one request may carry (events.MaxBatchEvents).
const FullBatch = 500

// redeem is one Redeem_Item event of the gateway workload.
func redeem(source, id, unit string, j int) map[string]any {
	return map[string]any{"specversion": "1.0", "id": id, "source": source, "type": "Redeem_Item",
		"businessunitid": unit, "customerid": fmt.Sprintf("CUST-%d", j), "data": map[string]any{"email": fmt.Sprintf("cust%d@example.test", j), "item": "voucher"}}
}

// gateway adds the registry (a NOTIFICATION event type sent on the log channel) and batches
// of its events, one batch sent twice. A second producer (source "/pos") sends the same ids
// as "/shop" in its own batches (CloudEvents: source + id identify an event, so each is its
// own event and its own message); a fifth of the seeds send one full batch of 500 events.
func (w *Workload) gateway(rng *rand.Rand) {
	// The second producer and the full batch draw from their own stream, so the draws of
	// everything else (and the seeds tests rely on) stay what they were.
	more := rand.New(rand.NewPCG(w.Seed, 0x50c1d50c1d50c1d))
	u := w.Units[rng.IntN(len(w.Units))]
	reg := map[string]any{"events": []any{map[string]any{"eventType": "Redeem_Item", "class": "NOTIFICATION",
		"schema":       map[string]any{"type": "object", "required": []string{"email", "item"}},
		"notification": map[string]any{"template": "redeem-done", "channels": []string{"log"}, "recipientPointer": "/email"}}}}
	b, _ := json.Marshal(reg)
	w.Ops = append(w.Ops, Op{At: w.Start, Kind: OpRegistry, Raw: b})
	t := w.Start
	for k := 1 + rng.IntN(3); k > 0; k-- {
		t = t.Add(time.Duration(1+rng.IntN(5*24*60)) * time.Minute)
		var evs, pos []any
		var ids, posIDs []EventRef
		for j := 1 + rng.IntN(3); j > 0; j-- {
			id := fmt.Sprintf("redeem-%d-%d", k, j)
			ids = append(ids, EventRef{"/shop", id})
			evs = append(evs, redeem("/shop", id, u.ID, j))
			if more.IntN(2) == 0 { // the other producer uses the same id
				posIDs = append(posIDs, EventRef{"/pos", id})
				pos = append(pos, redeem("/pos", id, u.ID, j+10))
			}
		}
		b, _ := json.Marshal(evs)
		w.Ops = append(w.Ops, Op{At: t, Kind: OpIngest, Raw: b, Redeems: ids})
		if rng.IntN(3) == 0 { // the client sends the batch again
			w.Ops = append(w.Ops, Op{At: t.Add(time.Duration(1+rng.IntN(600)) * time.Minute), Kind: OpIngest, Raw: b, Redeems: ids})
		}
		if len(pos) > 0 {
			b, _ := json.Marshal(pos)
			w.Ops = append(w.Ops, Op{At: t.Add(time.Duration(more.IntN(30)) * time.Minute), Kind: OpIngest, Raw: b, Redeems: posIDs})
		}
	}
	if more.IntN(5) == 0 {
		t = t.Add(rngMinutes(more, 1, 24*60))
		evs := make([]any, 0, FullBatch)
		ids := make([]EventRef, 0, FullBatch)
		for j := range FullBatch {
			id := fmt.Sprintf("bulk-%d", j)
			ids = append(ids, EventRef{"/bulk", id})
			evs = append(evs, redeem("/bulk", id, u.ID, j%7))
		}
		b, _ := json.Marshal(evs)
		w.Ops = append(w.Ops, Op{At: t, Kind: OpIngest, Raw: b, Redeems: ids})
	}
}

// rngMinutes is a whole number of minutes in [lo, hi].
func rngMinutes(rng *rand.Rand, lo, hi int) time.Duration {
	return time.Duration(lo+rng.IntN(hi-lo+1)) * time.Minute
}

// mustZone loads a zone's rules from the project's embedded tzdata (the data the pipeline
// uses; the oracle resolves local times itself, resolve.go).
func mustZone(name string) *time.Location {
	loc, err := localtime.LoadZone(name)
	if err != nil {
		panic(fmt.Sprintf("sim: zone %s: %v", name, err))
	}
	return loc
}
