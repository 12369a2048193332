package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Registry is the set of definitions in force: the latest version of every event type.
type Registry struct {
	// Version is the registry version in force: the highest save sequence (0 when empty).
	Version int64
	byType  map[string]*Compiled
	// leftOut says why a stored definition no longer checks (a channel removed, a rule added
	// since it was saved): its events are rejected saying so, not as an unregistered type.
	// At most one entry per stored type.
	leftOut map[string]string
}

// LeftOut says why the stored definition of eventType was left out ("" when it was not).
func (r *Registry) LeftOut(eventType string) string {
	if r == nil {
		return ""
	}
	return r.leftOut[eventType]
}

// Lookup returns the definition of an event type.
func (r *Registry) Lookup(eventType string) (*Compiled, bool) {
	if r == nil {
		return nil, false
	}
	c, ok := r.byType[eventType]
	return c, ok
}

// EventNames lists, sorted and once each, every event type the registry defines and every
// trigger event its counter instructions' thresholds emit (the attribute engine's triggers):
// what a campaign may be triggered by (campaign.Admin.KnownTriggers).
func (r *Registry) EventNames() []string {
	if r == nil {
		return nil
	}
	seen := map[string]bool{}
	for t, c := range r.byType {
		seen[t] = true
		for _, in := range c.Counter {
			for _, th := range in.Thresholds {
				if th.TriggerEvent != "" {
					seen[th.TriggerEvent] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// EntityTypes lists, sorted and once each, the entity types the registry's counter
// instructions write attributes of (CUSTOMER, ITEM, …): the attribute API's known types.
func (r *Registry) EntityTypes() []string {
	if r == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, c := range r.byType {
		for _, in := range c.Counter {
			seen[in.EntityType] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Len is the number of event types.
func (r *Registry) Len() int {
	if r == nil {
		return 0
	}
	return len(r.byType)
}

// DefaultReloadInterval bounds how long a saved version takes to reach the ingest path of
// another process (docs/gateway.md#hot-reload); a save through this process's Admin is
// seen at once.
const DefaultReloadInterval = 5 * time.Second

// Cache holds the registry in force and reloads it, without a restart, when the store's
// stamp moved: the ingest path asks for Current, which checks the stamp (one index seek) at
// most once per Interval. Safe for concurrent use.
type Cache struct {
	Store    store.GatewayStore
	Checker  Checker
	Clock    automation.Clock
	Interval time.Duration // 0: DefaultReloadInterval
	Log      *slog.Logger

	mu        sync.Mutex
	cur       *Registry
	checkedAt time.Time
}

// Current returns the registry in force, reloading it when its stamp changed and the last
// check is at least Interval old. Errors: the store's (the previous registry is kept and
// returned beside the error when there is one).
func (c *Cache) Current(ctx context.Context) (*Registry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultReloadInterval
	}
	now := c.Clock.Now()
	if c.cur != nil && now.Sub(c.checkedAt) < interval && !now.Before(c.checkedAt) {
		return c.cur, nil
	}
	stamp, err := c.Store.EventRegistryStamp(ctx)
	if err != nil {
		return c.cur, fmt.Errorf("gateway: registry stamp: %w", err)
	}
	if c.cur != nil && stamp == c.cur.Version {
		c.checkedAt = now
		return c.cur, nil
	}
	reg, err := c.load(ctx)
	if err != nil {
		return c.cur, err
	}
	c.cur, c.checkedAt = reg, now
	return reg, nil
}

// Invalidate makes the next Current check the store (after a save in this process).
func (c *Cache) Invalidate() {
	c.mu.Lock()
	c.checkedAt = time.Time{}
	c.cur = nil
	c.mu.Unlock()
}

func (c *Cache) load(ctx context.Context) (*Registry, error) {
	// The stamp is read before the list, so a save racing the load is seen at the next check.
	stamp, err := c.Store.EventRegistryStamp(ctx)
	if err != nil {
		return nil, fmt.Errorf("gateway: registry stamp: %w", err)
	}
	entries, err := c.Store.EventRegistryListLatest(ctx)
	if err != nil {
		return nil, fmt.Errorf("gateway: registry: %w", err)
	}
	reg := &Registry{Version: stamp, byType: make(map[string]*Compiled, len(entries))}
	for _, e := range entries {
		comp, err := c.Checker.CheckDefinition([]byte(e.DefinitionJSON))
		if err != nil {
			// Checked when saved; a stored definition that no longer checks (a channel removed
			// from the deployment) is left out and logged, never half-applied.
			if c.Log != nil {
				c.Log.Error("registry definition left out", "eventType", e.EventType, "version", e.Version, "error", err.Error())
			}
			if reg.leftOut == nil {
				reg.leftOut = map[string]string{}
			}
			reg.leftOut[e.EventType] = fmt.Sprintf("version %d no longer passes the registry's check (%v): save a fixed version", e.Version, err)
			continue
		}
		comp.Version = e.Version
		reg.byType[e.EventType] = comp
	}
	return reg, nil
}
