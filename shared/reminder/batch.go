package reminder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
)

var _ scheduler.BatchScoper = (*Handler)(nil)

// batchKey carries a *batchCache in a context (Handler.BatchScope).
type batchKey struct{}

// batchCache holds what revalidation reads for one claimed batch: each setting (parsed),
// source snapshot (decoded) and business unit (zone loaded) is read from the store once per
// batch, however many of the batch's rows share it (docs/performance.md#revalidation-per-batch).
// A store error other than ErrNotFound is not kept: the next row reads again.
type batchCache struct {
	mu       sync.Mutex
	settings map[string]*memo[settingEntry]
	snaps    map[[2]string]*memo[snapEntry]
	units    map[string]*memo[unitEntry]
}

// memo is one key's load, done once (sync.Once) by whichever row asks first.
type memo[T any] struct {
	once sync.Once
	v    T
	err  error
}

type settingEntry struct {
	rec store.ReminderSettingRecord
	set Setting
}

type snapEntry struct {
	snap store.SourceSnapshot
	data map[string]any // shared read-only by the batch's rows
}

type unitEntry struct {
	bu  store.BusinessUnitRecord
	loc *time.Location
}

// BatchScope implements scheduler.BatchScoper: the rows of one claimed batch are revalidated
// against one read of each setting, snapshot and business unit they name.
//
// The reads are made here, one after the other on the calling goroutine, for every reminder
// row of the batch, before any row executes (docs/performance.md#revalidation-per-batch). On the
// embedded store they then run on one pooled connection (the pool hands out the one returned
// last), whose page cache SQLite empties once when the read begins, since the writer
// connection wrote; read from the handlers' goroutines at once, they took up to Concurrency
// connections, each emptying its cache. The isolation is the same: every read is made after the claim, within the batch. A
// load that fails with an error other than store.ErrNotFound (or a permanent one) is not
// kept, so the row that needs it reads again when it executes and fails alone, as before.
func (h *Handler) BatchScope(ctx context.Context, rows []automation.SchedulerRow) context.Context {
	ctx = context.WithValue(ctx, batchKey{}, &batchCache{
		settings: map[string]*memo[settingEntry]{},
		snaps:    map[[2]string]*memo[snapEntry]{},
		units:    map[string]*memo[unitEntry]{},
	})
	// Each key is tried once here, whatever the result.
	tried := map[[3]string]bool{}
	try := func(kind, a, b string, load func()) {
		if k := [3]string{kind, a, b}; !tried[k] {
			tried[k] = true
			load()
		}
	}
	for _, row := range rows {
		if row.AutomationType != automation.TypeReminder || ctx.Err() != nil {
			continue
		}
		try("setting", row.SettingGuid, "", func() { _, _ = h.loadSetting(ctx, row.SettingGuid) })
		try("source", row.SourceEntityType, row.SourceEntityGuid, func() { _, _ = h.loadSnapshot(ctx, row.SourceEntityType, row.SourceEntityGuid) })
		try("unit", row.BusinessUnitID, "", func() { _, _ = h.loadUnit(ctx, row.BusinessUnitID) })
	}
	return ctx
}

// cached runs load once per key k in table(c), c being ctx's batch cache (without one it
// just loads), under c.mu for the map and outside it for the load; a result whose error is
// neither ErrNotFound nor permanent is dropped so a later row reads again.
func cached[K comparable, T any](ctx context.Context, table func(*batchCache) map[K]*memo[T], k K, load func() (T, error)) (T, error) {
	c := batchOf(ctx)
	if c == nil {
		return load()
	}
	m := table(c)
	c.mu.Lock()
	e, ok := m[k]
	if !ok {
		e = &memo[T]{}
		m[k] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.v, e.err = load() })
	if e.err != nil && !errors.Is(e.err, store.ErrNotFound) && !isPermanent(e.err) {
		c.mu.Lock()
		if m[k] == e {
			delete(m, k)
		}
		c.mu.Unlock()
	}
	return e.v, e.err
}

func isPermanent(err error) bool { return automation.IsPermanent(err) }

func batchOf(ctx context.Context) *batchCache {
	c, _ := ctx.Value(batchKey{}).(*batchCache)
	return c
}

// loadSetting reads and parses one setting. Errors: store.ErrNotFound, a permanent error for
// a stored setting that does not parse, or the store's error.
func (h *Handler) loadSetting(ctx context.Context, guid string) (settingEntry, error) {
	return cached(ctx, func(c *batchCache) map[string]*memo[settingEntry] { return c.settings }, guid, func() (settingEntry, error) {
		rec, err := h.Store.ReminderSettingGet(ctx, guid)
		if err != nil {
			return settingEntry{}, err
		}
		if set, ok := h.parsed.get(rec); ok {
			return settingEntry{rec: rec, set: set}, nil
		}
		set, err := ParseSetting([]byte(rec.Body))
		if err != nil {
			return settingEntry{}, automation.Permanent(fmt.Errorf("stored setting %s is invalid: %w", rec.Guid, err))
		}
		h.parsed.put(rec, set)
		return settingEntry{rec: rec, set: set}, nil
	})
}

// loadSnapshot reads one source snapshot and decodes its data (numbers as json.Number).
// Errors: store.ErrNotFound, a permanent error for data that is not JSON, or the store's.
func (h *Handler) loadSnapshot(ctx context.Context, entityType, entityGuid string) (snapEntry, error) {
	return cached(ctx, func(c *batchCache) map[[2]string]*memo[snapEntry] { return c.snaps }, [2]string{entityType, entityGuid}, func() (snapEntry, error) {
		snap, err := h.Store.SourceSnapshotGet(ctx, entityType, entityGuid)
		if err != nil {
			return snapEntry{}, err
		}
		var data map[string]any
		dec := json.NewDecoder(strings.NewReader(snap.DataJSON))
		dec.UseNumber()
		if err := dec.Decode(&data); err != nil {
			return snapEntry{}, automation.Permanent(fmt.Errorf("stored snapshot of %s/%s is not JSON: %w", snap.EntityType, snap.EntityGuid, err))
		}
		return snapEntry{snap: snap, data: data}, nil
	})
}

// loadUnit reads one business unit and loads its zone. Errors: the store's (wrapped with the
// unit's id) or a permanent error for an unknown zone.
func (h *Handler) loadUnit(ctx context.Context, id string) (unitEntry, error) {
	return cached(ctx, func(c *batchCache) map[string]*memo[unitEntry] { return c.units }, id, func() (unitEntry, error) {
		bu, err := h.Store.BusinessUnitGetRecord(ctx, id)
		if err != nil {
			return unitEntry{}, fmt.Errorf("business unit %s: %w", id, err)
		}
		loc, err := localtime.LoadZone(bu.TimeZoneID)
		if err != nil {
			return unitEntry{}, automation.Permanent(err)
		}
		return unitEntry{bu: bu, loc: loc}, nil
	})
}

// maxSettingParses bounds settingParses: far above the settings one herd names (the 09:00
// bench has 300), small in memory (a parsed setting and its body, a few hundred bytes each).
const maxSettingParses = 4096

// maxSettingParseBytes bounds settingParses in bytes too: the stored bodies it keeps, at most
// 4 MiB (the parses take about as much again, more for long offset lists). A herd's 300
// settings of a few hundred bytes are far below it; 4,096 of the largest valid settings
// (about 70 KB each) would otherwise hold about 700 MiB. A body larger than the bound is
// parsed every time, as before the cache.
const maxSettingParseBytes = 4 << 20

// settingParses keeps, across batches, the last parse of each setting with the stored body
// it was parsed from (Handler.loadSetting). Every batch still reads each setting it names
// from the store, so a batch never revalidates against a setting older than its own claim;
// only a body read again unchanged is not parsed again (ParseSetting is a function of the
// body alone). Behind the 09:00 herd every batch of 100 rows names 100 settings, so the
// 100,000 rows parsed 100,000 settings (1.1 s of CPU of a herd's run) where 300 were
// distinct. A parsed Setting is shared read-only, as the rows of one batch already share it.
// At most maxSettingParses entries and maxSettingParseBytes of bodies: a full table is
// emptied and fills again. Safe for
// concurrent use; the zero value is empty.
type settingParses struct {
	mu     sync.Mutex
	byGuid map[string]parsedSetting
	bytes  int // len of the bodies in byGuid
	parses int // ParseSetting calls made through put (tests)
}

type parsedSetting struct {
	body string
	set  Setting
}

// get returns the parse of rec's body when the last one kept for rec.Guid was of that body.
func (p *settingParses) get(rec store.ReminderSettingRecord) (Setting, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.byGuid[rec.Guid]
	if !ok || e.body != rec.Body {
		return Setting{}, false
	}
	return e.set, true
}

// put keeps set as the parse of rec's body.
func (p *settingParses) put(rec store.ReminderSettingRecord, set Setting) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parses++
	if len(rec.Body) > maxSettingParseBytes {
		return
	}
	if old, ok := p.byGuid[rec.Guid]; ok {
		p.bytes -= len(old.body)
		delete(p.byGuid, rec.Guid)
	}
	if p.byGuid == nil || len(p.byGuid) >= maxSettingParses || p.bytes+len(rec.Body) > maxSettingParseBytes {
		p.byGuid, p.bytes = make(map[string]parsedSetting), 0
	}
	p.byGuid[rec.Guid] = parsedSetting{body: rec.Body, set: set}
	p.bytes += len(rec.Body)
}
