package support

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/trace"
)

// Store is what the support service reads and writes.
type Store interface {
	store.SupportStore
	store.SchedulerStore
	store.ReminderStore
	// BusinessUnitGetRecord gives the role lists explain resolves recipients with.
	BusinessUnitGetRecord(ctx context.Context, id string) (store.BusinessUnitRecord, error)
	// BusinessUnitList gives the units the metrics sampler samples (Sampler).
	BusinessUnitList(ctx context.Context, p store.BusinessUnitListParams) ([]store.BusinessUnitRecord, error)
}

// Config tunes the service. Zero values take the documented defaults (Validate fills them).
type Config struct {
	// PageSize is the default page of a find (default 50); MaxPageSize its maximum (default
	// 500, at most store.MaxBatch).
	PageSize, MaxPageSize int
	// MaxReleasePerMinute is the highest rate a paced release may ask for, rows per minute
	// (default 600); faster requests are rejected. DefaultReleasePerMinute is used when a
	// release names none (default 60, at most MaxReleasePerMinute).
	MaxReleasePerMinute, DefaultReleasePerMinute int
	// DefaultReleaseBatch is the rows per paced batch when a release names none (default 10);
	// MaxReleaseBatch bounds it (default 100, at most store.MaxBatch).
	DefaultReleaseBatch, MaxReleaseBatch int
	// MaxReleaseRows bounds the rows one release request touches (default 10,000); a release
	// that stops there says so (More) and may be run again.
	MaxReleaseRows int
	// MetricsCap bounds every metrics count (default 100,000): a figure at the cap means "at
	// least" and is listed in Metrics.Capped.
	MetricsCap int
	// MaxDiagnosticsBytes bounds the diagnostics blob content returned with a row (default
	// 64 KiB); longer content is cut and marked truncated.
	MaxDiagnosticsBytes int
}

// Validate fills defaults and rejects impossible values.
func (c *Config) Validate() error {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.PageSize, 50)
	def(&c.MaxPageSize, 500)
	def(&c.MaxReleasePerMinute, 600)
	def(&c.DefaultReleasePerMinute, min(60, c.MaxReleasePerMinute))
	def(&c.DefaultReleaseBatch, 10)
	def(&c.MaxReleaseBatch, 100)
	def(&c.MaxReleaseRows, 10_000)
	def(&c.MetricsCap, 100_000)
	def(&c.MaxDiagnosticsBytes, 64<<10)
	switch {
	case c.MaxPageSize < 1 || c.MaxPageSize > store.MaxBatch || c.PageSize < 1 || c.PageSize > c.MaxPageSize:
		return fmt.Errorf("support: page sizes %d/%d outside 1..%d", c.PageSize, c.MaxPageSize, store.MaxBatch)
	case c.MaxReleasePerMinute < 1 || c.DefaultReleasePerMinute < 1 || c.DefaultReleasePerMinute > c.MaxReleasePerMinute:
		return fmt.Errorf("support: release rates default %d, maximum %d: want 1 <= default <= maximum", c.DefaultReleasePerMinute, c.MaxReleasePerMinute)
	case c.MaxReleaseBatch < 1 || c.MaxReleaseBatch > store.MaxBatch || c.DefaultReleaseBatch < 1 || c.DefaultReleaseBatch > c.MaxReleaseBatch:
		return fmt.Errorf("support: release batch default %d, maximum %d outside 1..%d", c.DefaultReleaseBatch, c.MaxReleaseBatch, store.MaxBatch)
	case c.MaxReleaseRows < 1:
		return fmt.Errorf("support: MaxReleaseRows %d must be positive", c.MaxReleaseRows)
	case c.MetricsCap < 1 || c.MetricsCap > store.MetricsMaxCap:
		return fmt.Errorf("support: MetricsCap %d outside 1..%d", c.MetricsCap, store.MetricsMaxCap)
	case c.MaxDiagnosticsBytes < 1:
		return fmt.Errorf("support: MaxDiagnosticsBytes %d must be positive", c.MaxDiagnosticsBytes)
	}
	return nil
}

// Service implements the support API's rules. Safe for concurrent use.
type Service struct {
	store Store
	trace trace.Store // nil: no trace rows read or written
	clock automation.Clock
	cfg   Config
	log   *slog.Logger
}

// New validates cfg and returns a service. tr may be nil (no trace); log may be nil.
func New(st Store, tr trace.Store, clock automation.Clock, cfg Config, log *slog.Logger) (*Service, error) {
	if st == nil || clock == nil {
		return nil, errors.New("support: a store and a clock are required")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, trace: tr, clock: clock, cfg: cfg, log: log}, nil
}

// Config returns the validated configuration.
func (s *Service) Config() Config { return s.cfg }

// notFound is the one answer for "unknown" and "outside your business units".
func notFound(what string) error {
	return automation.Errorf(automation.CodeNotFound, "%s not found", what)
}

// checkAudit validates who and why (automation.CheckAudit: both required, no control or
// bidirectional-text characters, bounded) and returns the trimmed reason.
func checkAudit(operator, reason string) (string, error) {
	_, reason, err := automation.CheckAudit(operator, reason)
	return reason, err
}

// lookup returns the row named by ref (its Id, or its Guid) if the scope sees it.
func (s *Service) lookup(ctx context.Context, sc automation.Scope, ref string) (automation.SchedulerRow, error) {
	ref = strings.TrimSpace(ref)
	var row automation.SchedulerRow
	var err error
	switch {
	case isID(ref):
		var id int64
		if _, perr := fmt.Sscan(ref, &id); perr != nil {
			return row, notFound("scheduler row " + ref)
		}
		row, err = s.store.SupportSchedulerGet(ctx, id)
	case isGUID(ref):
		row, err = s.store.SupportSchedulerGetByGuid(ctx, strings.ToLower(ref))
	default:
		return row, &automation.Error{Code: automation.CodeMalformed, Field: "id",
			Message: "must be a scheduler row's Id (a positive integer) or its Guid"}
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && (!sc.Allows(row.BusinessUnitID))) {
		return automation.SchedulerRow{}, notFound("scheduler row " + ref)
	}
	return row, err
}

func isID(s string) bool {
	if s == "" || len(s) > 18 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isGUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// utc returns t in UTC, truncated to the stored precision (milliseconds).
func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
