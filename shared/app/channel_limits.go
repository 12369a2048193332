package app

import (
	"fmt"
	"maps"
	"slices"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/delivery"
)

// LimitChannels puts each channel named in limits (AUTOMATION_CHANNEL_LIMITS,
// docs/configuration.md#channel-limits) behind its provider's limits, in place: the
// dispatcher and the campaign actions then share one bound per provider. A channel not
// named is left as it is (unlimited, as before); a name that is not a configured channel
// is an error naming it, so a limit is never silently dropped.
func LimitChannels(channels map[string]delivery.Channel, limits map[string]config.ChannelLimitConfig, clock automation.Clock) error {
	for _, n := range slices.Sorted(maps.Keys(limits)) {
		ch := channels[n]
		if ch == nil {
			return fmt.Errorf("app: AUTOMATION_CHANNEL_LIMITS names channel %q, which is not configured here", n)
		}
		if _, already := ch.(delivery.Limited); already {
			continue
		}
		l := limits[n]
		channels[n] = delivery.Limit(ch, delivery.Limits{Concurrency: l.Concurrency, RatePerSecond: l.RatePerSecond, Timeout: l.Timeout}, clock)
	}
	return nil
}
