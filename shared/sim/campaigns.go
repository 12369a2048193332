package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/automation-platform/automation/shared/campaign/providersim"
)

// The campaigns' part of the simulation: DIRECT gateway events start executions of a
// two-step campaign (a top-up, then a data pack only if the top-up succeeded) on a simulated
// action provider whose calls fail (503, nothing applied) or lose their answer (the effect
// applied, the connection closed unanswered), and the invariants its effects must keep.

// campaignProvider is the simulated provider of the workload: no deduplication by key (a
// second call would apply twice), a lookup by key, and faults on a fifth and a seventh of the
// calls; a quarter of the lookups fail (503) and a tenth lose their answer, so an in-doubt
// command meets a lookup that tells it nothing and must stay in doubt (never call again).
var campaignProvider = map[string]any{"name": "telco", "actionTypes": []string{"TOP_UP", "ADD_DATA"}, "dedupe": false, "lookup": true,
	"faults": map[string]any{"mode": "flaky", "failPercent": 20, "losePercent": 15, "lookupFailPercent": 25, "lookupLosePercent": 10}}

// campaigns adds the DIRECT `Joined` type to the registry, the `welcome` campaign of one unit
// and 1–3 batches of 1–4 Joined events, some batches sent again.
func (w *Workload) campaigns(rng *rand.Rand) {
	u := w.Units[rng.IntN(len(w.Units))]
	joined := map[string]any{"eventType": "Joined", "class": "DIRECT", "schema": map[string]any{"type": "object"}}
	w.addEventType(joined)
	def, _ := json.Marshal(map[string]any{"campaignId": "welcome", "businessUnitId": u.ID, "name": "Welcome", "status": "ACTIVE",
		"triggers": []string{"Joined"}, "actions": []any{
			map[string]any{"key": "topup", "type": "TOP_UP", "provider": "telco", "params": map[string]any{"amountMinor": 500, "currency": "AUD"}},
			map[string]any{"key": "data", "type": "ADD_DATA", "provider": "telco", "params": map[string]any{"packageCode": "WELCOME_1GB", "dataMb": 1024}, "when": "SUCCEEDED"},
		}})
	w.Ops = append(w.Ops, Op{At: w.Start, Kind: OpCampaign, Raw: def})
	w.Providers = append(w.Providers, campaignProvider)
	t := w.Start
	n := 0
	for k := 1 + rng.IntN(3); k > 0; k-- {
		t = t.Add(rngMinutes(rng, 1, 5*24*60))
		var evs []any
		var ids []string
		for j := 1 + rng.IntN(4); j > 0; j-- {
			n++
			id := fmt.Sprintf("join-%d", n)
			ids = append(ids, id)
			evs = append(evs, map[string]any{"specversion": "1.0", "id": id, "source": "/shop", "type": "Joined", "businessunitid": u.ID,
				"customerid": fmt.Sprintf("JOIN-%d", n), "data": map[string]any{"plan": "prepaid"}})
		}
		b, _ := json.Marshal(evs)
		w.Ops = append(w.Ops, Op{At: t, Kind: OpIngest, Raw: b, Joins: ids})
		if rng.IntN(3) == 0 {
			w.Ops = append(w.Ops, Op{At: t.Add(rngMinutes(rng, 1, 600)), Kind: OpIngest, Raw: b, Joins: ids})
		}
	}
	// Drawn after the rest of the campaign, so a seed's earlier history stays as it was.
	w.budgets(rng, u.ID)
}

// Providers implements replay.ProviderObserver: the checker reads the simulated providers'
// effects.
func (d *driver) Providers(p map[string]*providersim.Server) { d.chk.providers = p }

// checkCampaigns: one execution per accepted Joined event; no effect applied twice at the
// provider except for a command recorded UNKNOWN with its error; a SUCCEEDED command's effect
// applied once; every command terminal; a chain never skips (the data pack only after a
// succeeded top-up, action indexes contiguous from 0).
func (c *checker) checkCampaigns(ctx context.Context, r *report) error {
	joins := map[string]bool{}
	registry := false
	end := c.w.Until.Add(-Slack)
	for _, op := range c.w.Ops {
		if op.Kind == OpRegistry {
			registry = true
		}
		if op.Kind == OpIngest && registry && !op.At.After(end) {
			for _, id := range op.Joins {
				joins[id] = true
			}
		}
	}
	if len(joins) == 0 {
		return nil
	}
	db, err := c.open()
	if err != nil {
		return err
	}
	execs := map[string][]string{} // source event -> execution ids
	rs, err := db.QueryContext(ctx, `SELECT ExecutionId, SourceEventId FROM CampaignExecution WHERE CampaignId = 'welcome'`)
	if err != nil {
		return err
	}
	for rs.Next() {
		var id, src string
		if err := rs.Scan(&id, &src); err != nil {
			rs.Close()
			return err
		}
		execs[src] = append(execs[src], id)
	}
	rs.Close()
	for _, id := range slices.Sorted(maps.Keys(joins)) {
		// After a stop during a charge (StopCharge) the campaign starts nothing: an event the
		// dispatcher reads after the stop has no execution (never two).
		stopped := len(c.stoppedOrders) > 0
		r.check(InvCampaignExecOnce, len(execs[id]) == 1 || stopped && len(execs[id]) == 0, "accepted Joined event %s has %d executions of welcome (stopped %v)", id, len(execs[id]), stopped)
	}
	type cmd struct {
		index                      int
		effect, status, lastError  string
		actionType, executionState string
	}
	byExec := map[string][]cmd{}
	rs, err = db.QueryContext(ctx, `SELECT c.ExecutionId, c.ActionIndex, c.EffectKey, c.Status, COALESCE(c.LastError, ''), c.ActionType, e.Status
		FROM CampaignCommand c JOIN CampaignExecution e ON e.ExecutionId = c.ExecutionId WHERE c.CampaignId = 'welcome' ORDER BY c.ExecutionId, c.ActionIndex`)
	if err != nil {
		return err
	}
	for rs.Next() {
		var ex string
		var m cmd
		if err := rs.Scan(&ex, &m.index, &m.effect, &m.status, &m.lastError, &m.actionType, &m.executionState); err != nil {
			rs.Close()
			return err
		}
		byExec[ex] = append(byExec[ex], m)
	}
	rs.Close()
	telco := c.providers["telco"]
	for _, srcIDs := range execs {
		for _, ex := range srcIDs {
			cs := byExec[ex]
			for i, m := range cs {
				applied := 0
				if telco != nil {
					applied = telco.Applied(m.effect)
				}
				r.check(InvCampaignEffectOnce, applied <= 1 || (m.status == "UNKNOWN" && m.lastError != ""),
					"execution %s action %d (%s) applied %d times at the provider, recorded %s", ex, m.index, m.actionType, applied, m.status)
				r.check(InvCampaignEffectOnce, m.status != "SUCCEEDED" || applied == 1, "execution %s action %d is SUCCEEDED and applied %d times", ex, m.index, applied)
				r.check(InvCampaignTerminal, m.status != "QUEUED" && m.status != "RUNNING" && m.status != "WAITING_BUDGET", "execution %s action %d is left %s", ex, m.index, m.status)
				ok := m.index == i
				if i > 0 && m.actionType == "ADD_DATA" && m.status != "SKIPPED" && m.status != "CANCELLED" {
					ok = ok && cs[i-1].status == "SUCCEEDED"
				}
				r.check(InvCampaignChain, ok, "execution %s: action %d (%s, %s) after %v", ex, m.index, m.actionType, m.status, cs[:i])
			}
			if len(cs) > 0 && cs[0].executionState == "COMPLETED" {
				r.check(InvCampaignChain, len(cs) == 2 || (len(cs) == 1 && cs[0].status != "SUCCEEDED"),
					"execution %s COMPLETED with %d actions (the first %s)", ex, len(cs), cs[0].status)
			}
		}
	}
	return nil
}

// addEventType adds the registry definition def to every registry the workload sends (each
// OpRegistry op's "events"), or sends a registry of def alone at the start when it has none.
func (w *Workload) addEventType(def map[string]any) {
	added := false
	for i := range w.Ops {
		if w.Ops[i].Kind == OpRegistry {
			var reg map[string]any
			if err := json.Unmarshal(w.Ops[i].Raw, &reg); err == nil {
				reg["events"] = append(reg["events"].([]any), def)
				w.Ops[i].Raw, _ = json.Marshal(reg)
				added = true
			}
		}
	}
	if !added {
		b, _ := json.Marshal(map[string]any{"events": []any{def}})
		w.Ops = append(w.Ops, Op{At: w.Start, Kind: OpRegistry, Raw: b})
	}
}
