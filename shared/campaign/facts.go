package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Projection applies CampaignActionOutcomeEvent facts (topology.CampaignFactsTopic) to the
// per-campaign, per-day counts (WF07/WF08): the highest revision per command wins, so a
// replayed, duplicated or reordered fact never counts twice; the counts say how fresh they
// are (store.CampaignCounts.FreshTo).
type Projection struct {
	Store store.CampaignStore
	Clock automation.Clock
}

// Handle applies one fact message. An unreadable one is automation.Permanent.
func (p *Projection) Handle(ctx context.Context, body []byte) error {
	f, err := readFact(body)
	if err != nil {
		return err
	}
	_, err = p.Store.CampaignFactApply(ctx, []store.CampaignActionOutcomeEvent{f}, p.Clock.Now())
	return err
}

// readFact decodes a fact message. Errors (automation.Permanent): not JSON of a fact, or
// commandId missing, or revision not positive, named.
func readFact(body []byte) (store.CampaignActionOutcomeEvent, error) {
	var f store.CampaignActionOutcomeEvent
	err := json.Unmarshal(body, &f)
	switch {
	case err != nil:
		err = fmt.Errorf("not the JSON of a fact: %w", err)
	case f.CommandID == "":
		err = errors.New("commandId is missing")
	case f.Revision <= 0:
		err = fmt.Errorf("revision %d is not positive", f.Revision)
	default:
		return f, nil
	}
	return f, automation.Permanent(fmt.Errorf("campaign projection: unreadable fact: %w", err))
}

// HandleBatch applies fact messages in one store transaction (the CampaignFactProjection
// batch trigger): errs[i] is message i's outcome. An unreadable message is
// automation.Permanent and the rest still apply. Should the batch's transaction fail,
// nothing of it was written and each readable fact is applied alone, so one fact the store
// refuses never holds back the others. A batch over store.MaxBatch facts is refused whole.
func (p *Projection) HandleBatch(ctx context.Context, bodies [][]byte) []error {
	errs := make([]error, len(bodies))
	if !refuseOversizedBatch(errs, "campaign projection", "facts") {
		return errs
	}
	facts := make([]store.CampaignActionOutcomeEvent, 0, len(bodies))
	at := make([]int, 0, len(bodies)) // bodies index of facts[j]
	for i, b := range bodies {
		f, err := readFact(b)
		if err != nil {
			errs[i] = err
			continue
		}
		facts, at = append(facts, f), append(at, i)
	}
	if len(facts) == 0 {
		return errs
	}
	now := p.Clock.Now()
	if _, err := p.Store.CampaignFactApply(ctx, facts, now); err == nil || len(facts) == 1 {
		for _, i := range at {
			errs[i] = err
		}
		return errs
	}
	for j, f := range facts {
		_, errs[at[j]] = p.Store.CampaignFactApply(ctx, []store.CampaignActionOutcomeEvent{f}, now)
	}
	return errs
}

// Metrics is one read of the campaign gauges and the providers' counters
// (docs/campaigns.md#metrics).
type Metrics struct {
	At time.Time `json:"at"`
	// BusinessUnitID is the unit the command gauges count ("" = every unit's).
	BusinessUnitID    string          `json:"businessUnitId,omitempty"`
	CommandsWaiting   int             `json:"commandsWaiting"`
	CommandsUnknown   int             `json:"commandsUnknown"`
	CommandsPastLease int             `json:"commandsPastLease"`
	OutboxUnsent      int             `json:"outboxUnsent"`
	OutboxOldestAge   time.Duration   `json:"outboxOldestAgeNs"`
	Providers         []ProviderStats `json:"providers"`
}

// ReadMetrics reads the gauges at the clock's now — the command gauges of businessUnitID
// ("" = every unit) and the platform's outbox — and the providers' counters (nil: none).
func ReadMetrics(ctx context.Context, s store.CampaignStore, clock automation.Clock, providers *Providers, businessUnitID string) (Metrics, error) {
	now := clock.Now().UTC()
	g, err := s.CampaignMetricsRead(ctx, businessUnitID, now)
	if err != nil {
		return Metrics{}, err
	}
	m := Metrics{At: now, BusinessUnitID: businessUnitID, CommandsWaiting: g.Waiting, CommandsUnknown: g.Unknown, CommandsPastLease: g.PastLease, OutboxUnsent: g.OutboxUnsent}
	if g.OutboxOldestOn != nil {
		m.OutboxOldestAge = now.Sub(*g.OutboxOldestOn)
	}
	if providers != nil {
		m.Providers = providers.Stats()
	}
	return m, nil
}
