package sim

import (
	"sort"
	"strconv"
	"time"
)

// The oracle: a reference model of what must have happened, computed from the workload's
// operations alone (never from the pipeline's code or tables). It replays the acceptance
// rules of the README (an event id counts once; only a higher revision changes a source; a
// deletion ends it) and the settings' timelines, and says, for each occurrence of a
// date-based setting, whether it must have been delivered (and at which instant) or must
// not have been; for each threshold level whether it must have fired or must not have; and
// which gateway notifications must exist.

// occKey names one date-based occurrence: setting, source, target date, offset in days.
type occKey struct {
	Setting, Source, Target string
	Offset                  int
}

// thrKey names one threshold level of a source.
type thrKey struct {
	Setting, Source string
	Level           float64
}

// Expectations are the oracle's answer.
type Expectations struct {
	Must     map[occKey]time.Time // delivered, at this instant
	MustNot  map[occKey]bool      // never delivered
	ThrMust  map[thrKey]bool      // fired (once)
	ThrNever map[thrKey]bool      // never fired
	Redeems  map[EventRef]bool    // gateway notifications that must exist, by (source, id)
}

// Margins: an event is processed up to Margin late (clock jumps of the lease and restart
// faults), and a due occurrence is given Slack to get through retries before the end.
const (
	Margin = time.Hour
	Slack  = 6 * time.Hour
)

var forever = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

type period struct {
	from, to time.Time
	date     string // "" when deleted
}

// sourceTimeline replays the acceptance rules over the events of each source.
func (w *Workload) sourceTimelines() (map[string][]period, map[string][]Op) {
	seenIDs := map[string]bool{}
	rev := map[string]int{}
	out := map[string][]period{}
	accepted := map[string][]Op{}
	for _, op := range w.Ops {
		if op.Kind != OpEvent && op.Kind != OpDelete {
			continue
		}
		if seenIDs[op.EventID] {
			continue // the same event again
		}
		seenIDs[op.EventID] = true
		if op.Revision <= rev[op.Source] {
			continue // an older revision
		}
		rev[op.Source] = op.Revision
		accepted[op.Source] = append(accepted[op.Source], op)
		ps := out[op.Source]
		if n := len(ps); n > 0 {
			ps[n-1].to = op.At
		}
		date := op.Date
		if op.Kind == OpDelete {
			date = ""
		}
		out[op.Source] = append(ps, period{from: op.At, to: forever, date: date})
	}
	return out, accepted
}

// Expect computes the oracle's expectations for w.
func (w *Workload) Expect() Expectations {
	ex := Expectations{Must: map[occKey]time.Time{}, MustNot: map[occKey]bool{}, ThrMust: map[thrKey]bool{}, ThrNever: map[thrKey]bool{}, Redeems: map[EventRef]bool{}}
	timelines, accepted := w.sourceTimelines()
	zone := map[string]string{}
	for _, u := range w.Units {
		zone[u.ID] = u.Zone
	}
	end := w.Until.Add(-Slack)
	for _, s := range w.Dates {
		loc := mustZone(zone[s.Unit])
		// The setting's timeline: an upsert (a new send time) also activates it (its body
		// says isActive: true); a deactivation ends it.
		type state struct {
			at       time.Time
			active   bool
			sendTime string
		}
		states := []state{{w.Start, true, s.SendTime}}
		for _, op := range w.Ops {
			last := states[len(states)-1]
			switch {
			case op.Kind == OpDeactivate && op.Setting == s.Guid:
				states = append(states, state{op.At, false, last.sendTime})
			case op.Kind == OpSendTime && op.Setting == s.Guid:
				states = append(states, state{op.At, true, op.SendTime})
			}
		}
		var activeP []period
		for i, st := range states {
			to := forever
			if i+1 < len(states) {
				to = states[i+1].at
			}
			if st.active {
				activeP = append(activeP, period{from: st.at, to: to})
			}
		}
		sendTimes := map[string]bool{}
		for _, st := range states {
			sendTimes[st.sendTime] = true
		}
		for src, ps := range timelines {
			first := accepted[src][0]
			if first.SourceType != s.SourceType || first.Unit != s.Unit {
				continue
			}
			dates := map[string]bool{}
			for _, p := range ps {
				if p.date != "" {
					dates[p.date] = true
				}
			}
			for date := range dates {
				target, _ := time.Parse(time.DateOnly, date)
				// The occurrence's validity periods: the source's date is this one and the
				// setting is active.
				var valid []period
				for _, p := range ps {
					if p.date != date {
						continue
					}
					for _, a := range activeP {
						from, to := maxTime(p.from, a.from), minTime(p.to, a.to)
						if from.Before(to) {
							valid = append(valid, period{from: from, to: to})
						}
					}
				}
				if len(valid) == 0 {
					continue
				}
				for _, off := range s.Offsets {
					local := target.AddDate(0, 0, -off)
					at := func(st string) time.Time { h, m := parseHM(st); return resolve(loc, local, h, m) }
					var earliest time.Time
					for st := range sendTimes {
						if t := at(st); earliest.IsZero() || t.Before(earliest) {
							earliest = t
						}
					}
					key := occKey{s.Guid, src, date, off}
					neverDue := true // in no period could it have been due (or late)
					for _, v := range valid {
						if v.to == forever || !earliest.After(v.to.Add(Margin)) || earliest.Before(v.from.Add(Margin)) {
							neverDue = false
						}
					}
					if neverDue {
						ex.MustNot[key] = true
						continue
					}
					last := valid[len(valid)-1]
					if last.to != forever {
						continue
					}
					earlierQuiet := true
					for _, v := range valid[:len(valid)-1] {
						if !earliest.After(v.to.Add(Margin)) {
							earlierQuiet = false
						}
					}
					final := at(states[len(states)-1].sendTime)
					// Every send-time change from shortly before the last period on happened
					// well before both the instant it replaced and the one it set.
					stable := true
					for i := 1; i < len(states); i++ {
						c, prev := states[i], states[i-1]
						if c.at.After(last.from.Add(-Margin)) && (!at(prev.sendTime).After(c.at.Add(Margin)) || !at(c.sendTime).After(c.at.Add(Margin))) {
							stable = false
						}
					}
					if earlierQuiet && stable && !final.Before(last.from.Add(Margin)) && !final.After(end) {
						ex.Must[key] = final
					}
				}
			}
		}
	}
	for _, s := range w.Thresholds {
		for src, ops := range accepted {
			if ops[0].SourceType != "ClassSession" || ops[0].Unit != s.Unit {
				continue
			}
			for _, lv := range s.Levels {
				level := float64(lv)
				key := thrKey{s.Guid, src, level}
				ever := false
				for _, op := range ops {
					if op.Kind == OpEvent && reached(op, level) {
						ever = true
					}
				}
				last := ops[len(ops)-1]
				switch {
				case !ever:
					ex.ThrNever[key] = true
				case last.Kind == OpEvent && reached(last, level) && !last.At.After(end):
					ex.ThrMust[key] = true
				}
			}
		}
	}
	registry := false
	for _, op := range w.Ops {
		switch op.Kind {
		case OpRegistry:
			registry = true
		case OpIngest:
			if registry && !op.At.After(end) {
				for _, id := range op.Redeems {
					ex.Redeems[id] = true
				}
			}
		}
	}
	return ex
}

// reached: 100 × booked / capacity ≥ level, in exact integer arithmetic.
func reached(op Op, level float64) bool {
	return op.Capacity > 0 && float64(100*op.Booked) >= level*float64(op.Capacity)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// sortedOcc returns the keys of m in a stable order (for reproducible reports).
func sortedOcc[V any](m map[occKey]V) []occKey {
	keys := make([]occKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Setting+a.Source+a.Target != b.Setting+b.Source+b.Target {
			return a.Setting+a.Source+a.Target < b.Setting+b.Source+b.Target
		}
		return a.Offset < b.Offset
	})
	return keys
}

func (k occKey) String() string {
	return k.Setting + "/" + k.Source + "/" + k.Target + "-" + strconv.Itoa(k.Offset) + "d"
}
