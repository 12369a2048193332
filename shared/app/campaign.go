package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/handler"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
)

// wireCampaigns builds the campaign services (docs/campaigns.md): every delivery channel is a
// provider of the NOTIFICATION_* actions under its own name, beside o.CampaignProviders.
func (r *Runtime) wireCampaigns(o Options, channels map[string]delivery.Channel, jitter func() float64, log *slog.Logger) error {
	providers := campaign.NewProviders(r.Clock)
	for _, n := range slices.Sorted(maps.Keys(channels)) {
		if _, clash := o.CampaignProviders[n]; clash {
			return fmt.Errorf("app: campaign provider %q is also a delivery channel", n)
		}
		providers.Add(n, &campaign.ChannelProvider{Name: n, Channel: channels[n], Clock: r.Clock, Templates: r.Templates}, channelProviderConfig(channels[n]))
	}
	for n, p := range o.CampaignProviders {
		providers.Add(n, p.Provider, p.Config)
	}
	catalog, err := campaign.NewCatalog(campaign.BuiltinActionTypes(), providers)
	if err != nil {
		return err
	}
	zone := func(ctx context.Context, bu string) (*time.Location, error) {
		u, err := r.Store.BusinessUnitGet(ctx, bu)
		if err != nil {
			return time.UTC, nil // a unit the settings do not know: its day in UTC
		}
		return localtime.LoadZone(u.TimeZoneID)
	}
	r.Campaigns = &campaign.Admin{Store: r.Store, Catalog: catalog, Clock: r.Clock, KnownTriggers: r.knownTriggers}
	r.Campaign = handler.CampaignDeps{
		Dispatcher: &campaign.Dispatcher{Store: r.Store, Clock: r.Clock, Zone: zone, Log: log},
		Worker: &campaign.Worker{Store: r.Store, Clock: r.Clock, Providers: providers, Log: log,
			OnRecorded: o.OnCampaignAction, Parallel: o.CampaignSweepParallel, Hooks: o.Faults.Campaign,
			Backoff: scheduler.Backoff{Steps: scheduler.DefaultBackoff, JitterFraction: 0.10, Rand: jitter}},
		Projection: &campaign.Projection{Store: r.Store, Clock: r.Clock},
		Purger:     &delivery.OutboxPurger{Store: r.Store, Clock: r.Clock},
		Clock:      r.Clock, Log: log,
	}
	return nil
}

// knownTriggers is what a campaign may be triggered by: the registry's event types and the
// trigger events of its counter instructions (gateway.Registry.EventNames).
func (r *Runtime) knownTriggers(ctx context.Context) ([]string, error) {
	reg, err := r.Registry.Cache.Current(ctx)
	if err != nil && reg == nil {
		return nil, err
	}
	return reg.EventNames(), nil
}

// entityTypes is what the attribute API knows: the entity types of the registry's counter
// instructions (gateway.Registry.EntityTypes).
func (r *Runtime) entityTypes(ctx context.Context) ([]string, error) {
	reg, err := r.Registry.Cache.Current(ctx)
	if err != nil && reg == nil {
		return nil, err
	}
	return reg.EntityTypes(), nil
}

// templateWarning answers a reminder setting's write with a warning when one of its channels
// needs rendered content (delivery.Traits.NeedsContent: email, webhook) and its template is
// stored neither for the unit nor as the default: every delivery would then fail on it. A
// warning, not a refusal: templates and settings are saved by separate calls, in either
// order (docs/architecture.md#settings-changes).
func templateWarning(templates *delivery.Templates, channels map[string]delivery.Channel) func(context.Context, string, string, []string) (string, error) {
	return func(ctx context.Context, bu, key string, chans []string) (string, error) {
		var needs []string
		for _, ch := range chans {
			if c := channels[ch]; c != nil && c.Traits().NeedsContent {
				needs = append(needs, ch)
			}
		}
		if len(needs) == 0 {
			return "", nil
		}
		_, err := templates.Get(ctx, key, bu)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Sprintf("template %q does not exist for business unit %q (nor as the default), and channels %s need it: "+
				"save the template before the first delivery, or every delivery on those channels fails", key, bu, strings.Join(needs, ", ")), nil
		}
		return "", err
	}
}

// channelProviderConfig is the campaign provider bound of a delivery channel: a channel
// behind AUTOMATION_CHANNEL_LIMITS (delivery.Limited) enforces its limits itself, for
// deliveries and campaign actions together, so the campaign's own admission takes the
// same concurrency and timeout (and no rate of its own: the channel's bucket is the one).
// A channel without limits takes the campaign defaults.
func channelProviderConfig(ch delivery.Channel) campaign.ProviderConfig {
	l, ok := ch.(delivery.Limited)
	if !ok {
		return campaign.ProviderConfig{}
	}
	lim := l.Limits()
	return campaign.ProviderConfig{Concurrency: lim.Concurrency, Timeout: lim.Timeout}
}
