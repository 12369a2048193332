package app

import (
	"fmt"
	"maps"
	"slices"

	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/config"
)

// CampaignProvidersFromConfig returns the HTTP action providers of
// AUTOMATION_CAMPAIGN_PROVIDERS (config.CampaignProviderConfig, docs/campaigns.md#configured-providers)
// beside those of extra (app.Options.CampaignProviders). Errors: a configured name extra uses
// too, or an action type the campaign catalog does not know (config checks only its shape).
func CampaignProvidersFromConfig(cfg config.Config, extra map[string]CampaignProvider) (map[string]CampaignProvider, error) {
	if len(cfg.CampaignProviders) == 0 {
		return extra, nil
	}
	known := map[string]bool{}
	for _, t := range campaign.BuiltinActionTypes() {
		known[t.Name] = true
	}
	out := maps.Clone(extra)
	if out == nil {
		out = map[string]CampaignProvider{}
	}
	for _, p := range cfg.CampaignProviders {
		if _, dup := out[p.Name]; dup {
			return nil, fmt.Errorf("app: AUTOMATION_CAMPAIGN_PROVIDERS: provider %q is registered by the caller too", p.Name)
		}
		for _, t := range p.ActionTypes {
			if !known[t] {
				return nil, fmt.Errorf("app: AUTOMATION_CAMPAIGN_PROVIDERS: provider %q: unknown action type %q", p.Name, t)
			}
		}
		out[p.Name] = CampaignProvider{
			Provider: &campaign.HTTPProvider{BaseURL: p.BaseURL, Dedupe: p.Dedupe, HasLookup: p.Lookup, ActionTypes: slices.Clone(p.ActionTypes), Token: p.Token},
			Config:   campaign.ProviderConfig{Concurrency: p.Concurrency, RatePerSecond: p.RatePerSecond, Timeout: p.Timeout},
		}
	}
	return out, nil
}
