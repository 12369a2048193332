package campaign

import (
	"context"
	"encoding/json"
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
	var f store.CampaignActionOutcomeEvent
	if err := json.Unmarshal(body, &f); err != nil || f.CommandID == "" || f.Revision <= 0 {
		return automation.Permanent(fmt.Errorf("campaign projection: unreadable fact: %v", err))
	}
	_, err := p.Store.CampaignFactApply(ctx, []store.CampaignActionOutcomeEvent{f}, p.Clock.Now())
	return err
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
