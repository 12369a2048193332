package report

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// RenderRequest is what a renderer gets for one run. Instants UTC; the period is [Start, End).
type RenderRequest struct {
	SubscriptionGuid string
	SubscriptionName string
	BusinessUnitID   string
	ReportType       string
	Format           string
	Parameters       json.RawMessage // the subscription's renderer parameters (object or empty)
	SchedulerKey     string
	RunKeyHash       string
	PeriodStart      time.Time
	PeriodEnd        time.Time
	TimeZoneID       string
}

// File is a rendered report.
type File struct {
	Body        []byte
	ContentType string // e.g. "text/csv; charset=utf-8"
	Extension   string // without the dot, e.g. "csv"
}

// Renderer renders one report type (docs/architecture.md#report-subscriptions: a renderer interface; the built-in
// automation-activity CSV, and HTTP report sources for domain reports). An error is a failed
// attempt, retried with backoff; wrap it with automation.Permanent when retrying cannot help.
type Renderer interface {
	// Formats lists the formats (lower-case, e.g. "csv") the renderer produces.
	Formats() []string
	// Render produces the report for the request.
	Render(ctx context.Context, req RenderRequest) (File, error)
}

// Registry maps report types to renderers.
type Registry struct{ m map[string]Renderer }

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{m: map[string]Renderer{}} }

// Register sets the renderer of reportType; registering a type twice is a programming error
// (panic).
func (r *Registry) Register(reportType string, rr Renderer) {
	if _, dup := r.m[reportType]; dup {
		panic(fmt.Sprintf("report: renderer for %s registered twice", reportType))
	}
	if !tokenRE.MatchString(reportType) || rr == nil || len(rr.Formats()) == 0 {
		panic(fmt.Sprintf("report: invalid renderer registration %q", reportType))
	}
	r.m[reportType] = rr
}

// Lookup returns the renderer of reportType.
func (r *Registry) Lookup(reportType string) (Renderer, bool) {
	if r == nil {
		return nil, false
	}
	rr, ok := r.m[reportType]
	return rr, ok
}

// Types lists the registered report types, sorted.
func (r *Registry) Types() []string {
	if r == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(r.m))
}
