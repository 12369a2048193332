package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// The attribute engine's part of the simulation: gateway `Visit` events whose registry
// definition carries counter instructions, and the model of what they must leave behind.

// Visit is one loyalty event of the workload: a customer's visit at an instant.
type Visit struct {
	ID, Customer string
	// Source is the producer: "/shop", or "/kiosk", whose ids repeat the shop's (the same id
	// from two sources is two events).
	Source string
	Time   time.Time
}

// visitType is the registry definition of the `Visit` event: a daily counter with two
// thresholds, a first-visit flag, a daily streak and a hot lifetime counter on the shop.
var visitType = map[string]any{"eventType": "Visit", "class": "COUNTER",
	"schema": map[string]any{"type": "object", "required": []string{"shop"}},
	"counterInstructions": []any{
		map[string]any{"attribute_code": "visit_count", "entity_type": "CUSTOMER", "operation": "INCREMENT", "period_type": "DAILY",
			"thresholds": []any{map[string]any{"value": 2, "trigger_event": "Visit_2"}, map[string]any{"value": 3, "trigger_event": "Visit_3"}}},
		map[string]any{"attribute_code": "first_visit", "entity_type": "CUSTOMER", "operation": "SET_TRUE_ONCE",
			"thresholds": []any{map[string]any{"value": 1, "trigger_event": "First_Visit"}}},
		map[string]any{"attribute_code": "visit_streak", "entity_type": "CUSTOMER", "operation": "STREAK_INCREMENT", "period_type": "DAILY",
			"thresholds": []any{map[string]any{"value": 2, "trigger_event": "Streak_2"}}},
		map[string]any{"attribute_code": "visit_total", "entity_type": "ITEM", "entity_id_pointer": "/shop", "operation": "INCREMENT", "hot": true},
		// A falling lifetime counter: -1 per visit; the threshold -2 fires once, on the second
		// visit, and never again below it.
		map[string]any{"attribute_code": "visit_credit", "entity_type": "CUSTOMER", "operation": "DECREMENT",
			"thresholds": []any{map[string]any{"value": -2, "trigger_event": "Credit_Low"}}},
	}}

// visitTimes are local wall times of visits: both sides of local midnight, so a visit's
// local day often differs from its UTC day.
var visitTimes = []string{"00:10", "00:40", "12:00", "23:20", "23:50"}

// loyalty adds Visit events for 1–3 customers of one unit: per customer 1–4 local days (often
// consecutive), 1–3 visits a day, each ingested 1–30 min after it happened, some batches sent
// again. The registry gets the Visit type (added to the gateway's registry when there is one).
func (w *Workload) loyalty(rng *rand.Rand) {
	u := w.Units[rng.IntN(len(w.Units))]
	loc := mustZone(u.Zone)
	w.addEventType(visitType)
	counters := map[string]int{} // per source: the kiosk's ids repeat the shop's
	for c := 1 + rng.IntN(3); c > 0; c-- {
		cust := fmt.Sprintf("LOY-%d", c)
		source := "/shop"
		if c%2 == 0 {
			source = "/kiosk"
		}
		day := w.Start.In(loc).AddDate(0, 0, 1+rng.IntN(20))
		for d := 1 + rng.IntN(4); d > 0; d-- {
			var evs []any
			var vs []Visit
			var last time.Time
			for k := 1 + rng.IntN(3); k > 0; k-- {
				hm := visitTimes[rng.IntN(len(visitTimes))]
				h, _ := strconv.Atoi(hm[:2])
				m, _ := strconv.Atoi(hm[3:])
				t := time.Date(day.Year(), day.Month(), day.Day(), h, m, rng.IntN(60), 0, loc).UTC()
				counters[source]++
				v := Visit{ID: fmt.Sprintf("visit-%d", counters[source]), Customer: cust, Source: source, Time: t}
				vs = append(vs, v)
				evs = append(evs, map[string]any{"specversion": "1.0", "id": v.ID, "source": v.Source, "type": "Visit", "businessunitid": u.ID,
					"customerid": cust, "time": t.Format(time.RFC3339), "data": map[string]any{"shop": "SHOP-1"}})
				if t.After(last) {
					last = t
				}
			}
			b, _ := json.Marshal(evs)
			at := last.Add(time.Duration(1+rng.IntN(30)) * time.Minute)
			w.Ops = append(w.Ops, Op{At: at, Kind: OpIngest, Raw: b, Visits: vs})
			if rng.IntN(4) == 0 { // the client sends the batch again
				w.Ops = append(w.Ops, Op{At: at.Add(time.Duration(1+rng.IntN(300)) * time.Minute), Kind: OpIngest, Raw: b, Visits: vs})
			}
			step := 1 // mostly the next day: a streak
			if rng.IntN(3) == 0 {
				step = 2 + rng.IntN(2)
			}
			day = day.AddDate(0, 0, step)
		}
	}
}

// loyaltyModel is what the accepted Visit events must leave, computed from the history alone
// with local days taken by the oracle itself (the instant in the unit's zone), not by the
// engine's period code.
type loyaltyModel struct {
	unit      string
	total     int                       // distinct accepted visits (the hot counter)
	days      map[string]map[string]int // customer -> local day -> visits
	customers []string
}

func (w *Workload) loyaltyModel() *loyaltyModel {
	m := &loyaltyModel{days: map[string]map[string]int{}}
	registry, seen := false, map[EventRef]bool{}
	end := w.Until.Add(-Slack)
	zone := map[string]string{}
	for _, u := range w.Units {
		zone[u.ID] = u.Zone
	}
	for _, op := range w.Ops {
		if op.Kind == OpRegistry {
			registry = true
		}
		if op.Kind != OpIngest || len(op.Visits) == 0 || !registry || op.At.After(end) {
			continue
		}
		var evs []struct {
			BU string `json:"businessunitid"`
		}
		_ = json.Unmarshal(op.Raw, &evs)
		for i, v := range op.Visits {
			if seen[EventRef{v.Source, v.ID}] { // dedupe per (source, id)
				continue
			}
			seen[EventRef{v.Source, v.ID}] = true
			m.unit = evs[i].BU
			day := v.Time.In(mustZone(zone[m.unit])).Format("2006-01-02")
			if m.days[v.Customer] == nil {
				m.days[v.Customer] = map[string]int{}
				m.customers = append(m.customers, v.Customer)
			}
			m.days[v.Customer][day]++
			m.total++
		}
	}
	sort.Strings(m.customers)
	return m
}

// streak is the model's final daily streak of a customer (the run of consecutive local days
// ending at the last one) and how many times a run reached 2 (Streak_2 crossings).
func streak(days map[string]int) (final, crossings int) {
	var prev time.Time
	for i, d := range slices.Sorted(maps.Keys(days)) {
		t, _ := time.Parse("2006-01-02", d)
		if i > 0 && t.Equal(prev.AddDate(0, 0, 1)) {
			final++
		} else {
			final = 1
		}
		if final == 2 {
			crossings++
		}
		prev = t
	}
	return final, crossings
}

// checkLoyalty compares the attribute rows and the trigger events the relay published with
// the model. Counters, the flag and the hot total hold whatever the processing order; the
// streak, which an older event may not move (docs/attributes.md, order), is exact only when
// nothing reordered the tracking messages (no held, crashed or restarted delivery), and
// bounded by the model otherwise.
func (c *checker) checkLoyalty(ctx context.Context, r *report, st store.AttributeStore, reordered bool) error {
	m := c.w.loyaltyModel()
	if m.total == 0 {
		return nil
	}
	shop := store.AttributeEntity{BusinessUnitID: m.unit, EntityType: "ITEM", EntityID: "SHOP-1"}
	rows, err := st.AttributeList(ctx, shop)
	if err != nil {
		return err
	}
	deltas, err := st.AttributeDeltaSums(ctx, shop)
	if err != nil {
		return err
	}
	total := decimal.New(deltas["visit_total"], -6)
	for _, rw := range rows {
		if rw.AttributeCode == "visit_total" {
			v, err := decimal.NewFromString(rw.ValueText)
			if err != nil {
				return err
			}
			total = total.Add(v)
		}
	}
	r.check(InvAttrCounters, total.Equal(decimal.NewFromInt(int64(m.total))), "hot counter visit_total is %s (folded and unfolded), the model %d distinct visits", total, m.total)
	// Triggers by (customer, trigger, local day of the source event): distinct ids.
	loc := mustZone(c.zoneOf(m.unit))
	type tkey struct{ cust, name, day string }
	trig := map[tkey]int{}
	for _, tr := range c.triggers {
		t, err := time.Parse(time.RFC3339, tr.Timestamp)
		if err != nil {
			return err
		}
		trig[tkey{tr.Metadata.EntityID, tr.EventName, t.In(loc).Format("2006-01-02")}]++
	}
	for _, cust := range m.customers {
		e := store.AttributeEntity{BusinessUnitID: m.unit, EntityType: "CUSTOMER", EntityID: cust}
		list, err := st.AttributeList(ctx, e)
		if err != nil {
			return err
		}
		got := map[string]store.AttributeRow{}
		for _, rw := range list {
			got[rw.AttributeCode] = rw
		}
		days := m.days[cust]
		last := ""
		for d := range days {
			last = max(last, d)
		}
		vc := got["visit_count"]
		r.check(InvAttrCounters, vc.Period == last && vc.ValueText == strconv.Itoa(days[last]),
			"%s visit_count is %q in period %q; the model %d on its last local day %s", cust, vc.ValueText, vc.Period, days[last], last)
		r.check(InvAttrCounters, got["first_visit"].ValueText == "true", "%s first_visit is %q, the model true", cust, got["first_visit"].ValueText)
		visits := 0
		for _, n := range days {
			visits += n
		}
		r.check(InvAttrCounters, got["visit_credit"].ValueText == strconv.Itoa(-visits), "%s visit_credit is %q, the model %d (DECREMENT per distinct visit)",
			cust, got["visit_credit"].ValueText, -visits)
		fs, fc := streak(days)
		sv, _ := strconv.Atoi(got["visit_streak"].ValueText)
		r.check(InvAttrCounters, sv == fs || (reordered && sv >= 1 && sv <= fs), "%s visit_streak is %d, the model %d (reordered %v)", cust, sv, fs, reordered)
		first, streaks, low := 0, 0, 0
		for k, n := range trig {
			if k.cust != cust {
				continue
			}
			switch k.name {
			case "First_Visit":
				first += n
			case "Streak_2":
				streaks += n
			case "Credit_Low":
				low += n
			}
		}
		wantLow := 0
		if visits >= 2 {
			wantLow = 1 // the falling crossing -1 -> -2, once; below -2 it never fires again
		}
		r.check(InvAttrTriggers, low == wantLow, "%s has %d Credit_Low triggers after %d visits, the model %d", cust, low, visits, wantLow)
		r.check(InvAttrTriggers, first == 1, "%s has %d First_Visit triggers, the model 1", cust, first)
		r.check(InvAttrTriggers, streaks == fc || (reordered && streaks <= fc), "%s has %d Streak_2 triggers, the model %d crossings (reordered %v)", cust, streaks, fc, reordered)
		for day, n := range days {
			for _, th := range []struct {
				name  string
				value int
			}{{"Visit_2", 2}, {"Visit_3", 3}} {
				k := tkey{cust, th.name, day}
				want := n >= th.value
				ok := trig[k] <= 1 && (trig[k] == 0 || want) && (!want || trig[k] == 1 || (reordered && day != last))
				r.check(InvAttrTriggers, ok, "%s on %s: %d visits, %d %s triggers (one per crossing)", cust, day, n, trig[k], th.name)
				delete(trig, k)
			}
		}
	}
	for k, n := range trig {
		if k.name == "Visit_2" || k.name == "Visit_3" {
			r.check(InvAttrTriggers, false, "%s: %d %s triggers on %s, a day without a modelled visit", k.cust, n, k.name, k.day)
		}
	}
	return nil
}

func (c *checker) zoneOf(unit string) string {
	for _, u := range c.w.Units {
		if u.ID == unit {
			return u.Zone
		}
	}
	return "UTC"
}

// noteTrigger records a trigger event the relay published (a republished copy has the same
// id and counts once).
func (c *checker) noteTrigger(destination string, body []byte) {
	if destination != topology.EventsTopic {
		return
	}
	var tr attribute.TriggerEvent
	if json.Unmarshal(body, &tr) != nil || tr.Metadata.SourceSystem != "attribute-service" {
		return
	}
	if c.triggers == nil {
		c.triggers = map[string]attribute.TriggerEvent{}
	}
	c.triggers[tr.EventID] = tr
}
