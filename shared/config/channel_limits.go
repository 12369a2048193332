package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// ChannelLimitConfig bounds one delivery channel's provider (AUTOMATION_CHANNEL_LIMITS,
// docs/configuration.md#channel-limits; seed 002's WF09: each worker's concurrency and
// timeout per provider, on the shared command platform). Zero values take the defaults of
// delivery.Limits: Concurrency 4 calls in flight, RatePerSecond unlimited, Timeout none
// beyond the channel's own and the send claim's lease.
type ChannelLimitConfig struct {
	Concurrency   int
	RatePerSecond float64
	Timeout       time.Duration
}

// channelLimitMembers are the members of one AUTOMATION_CHANNEL_LIMITS entry; any other is
// refused, so a typo never silently drops a limit.
var channelLimitMembers = []string{"concurrency", "ratePerSecond", "timeoutSeconds"}

// parseChannelLimits reads AUTOMATION_CHANNEL_LIMITS: "" is none; otherwise a JSON object
// {"<channel>": {"concurrency": n, "ratePerSecond": r, "timeoutSeconds": s}} whose names are
// in ChannelNames and whose members are in range (concurrency 1..256, ratePerSecond
// 0..100000 with 0 unlimited, timeoutSeconds 0..300 with 0 none). Errors name the channel
// and the member.
func parseChannelLimits(v string) (map[string]ChannelLimitConfig, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var raw map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return nil, fmt.Errorf(`want a JSON object {"<channel>":{"concurrency":4,"ratePerSecond":10,"timeoutSeconds":10}}: %v`, jsonProblem(err))
	}
	out := make(map[string]ChannelLimitConfig, len(raw))
	for _, n := range slices.Sorted(maps.Keys(raw)) {
		m := raw[n]
		if !slices.Contains(ChannelNames, n) {
			return nil, fmt.Errorf("%q: not a delivery channel (known: %s)", clip(n), strings.Join(ChannelNames, ", "))
		}
		if m == nil {
			return nil, fmt.Errorf("%s: want an object", n)
		}
		keys := slices.Sorted(maps.Keys(m))
		var e struct {
			Concurrency    *int     `json:"concurrency"`
			RatePerSecond  *float64 `json:"ratePerSecond"`
			TimeoutSeconds *int     `json:"timeoutSeconds"`
		}
		for _, k := range keys {
			if !slices.Contains(channelLimitMembers, k) {
				return nil, fmt.Errorf("%s: unknown member %q (known: %s)", n, k, strings.Join(channelLimitMembers, ", "))
			}
			one, _ := json.Marshal(map[string]json.RawMessage{k: m[k]})
			if err := json.Unmarshal(one, &e); err != nil {
				return nil, fmt.Errorf("%s.%s: %v", n, k, jsonProblem(err))
			}
		}
		var c ChannelLimitConfig
		if e.Concurrency != nil {
			if *e.Concurrency < 1 || *e.Concurrency > maxProviderConcurrency {
				return nil, fmt.Errorf("%s.concurrency: want 1..%d, got %d", n, maxProviderConcurrency, *e.Concurrency)
			}
			c.Concurrency = *e.Concurrency
		}
		if e.RatePerSecond != nil {
			if *e.RatePerSecond < 0 || *e.RatePerSecond > maxProviderRate {
				return nil, fmt.Errorf("%s.ratePerSecond: want 0..%d (0: unlimited), got %v", n, maxProviderRate, *e.RatePerSecond)
			}
			c.RatePerSecond = *e.RatePerSecond
		}
		if e.TimeoutSeconds != nil {
			if *e.TimeoutSeconds < 0 || *e.TimeoutSeconds > maxProviderTimeout {
				return nil, fmt.Errorf("%s.timeoutSeconds: want 0..%d (0: none), got %d", n, maxProviderTimeout, *e.TimeoutSeconds)
			}
			c.Timeout = time.Duration(*e.TimeoutSeconds) * time.Second
		}
		out[n] = c
	}
	return out, nil
}
