package support

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Filter selects scheduler rows. Empty fields do not filter; SourceType and SourceGuid go
// together.
type Filter struct {
	SchedulerKey   string
	SourceType     string
	SourceGuid     string
	BusinessUnitID string
	Status         automation.Status
	OnHold         *bool
	ScheduledFrom  *time.Time // inclusive, UTC
	ScheduledTo    *time.Time // exclusive, UTC
}

// Validate checks the filter: a known status, source type and guid together, from < to.
// Errors are CodeMalformed naming the query parameter.
func (f Filter) Validate() error {
	bad := func(field, msg string) error {
		return &automation.Error{Code: automation.CodeMalformed, Field: field, Message: msg}
	}
	if f.Status != "" && !knownStatus(f.Status) {
		return bad("status", "must be one of Pending, Processing, Completed, Failed, Deactivated, Cancelled")
	}
	if (f.SourceType == "") != (f.SourceGuid == "") {
		return bad("sourceGuid", "sourceType and sourceGuid go together")
	}
	if f.ScheduledFrom != nil && f.ScheduledTo != nil && !f.ScheduledFrom.Before(*f.ScheduledTo) {
		return bad("scheduledTo", "must be after scheduledFrom")
	}
	if len(f.SchedulerKey) > automation.MaxSchedulerKeyLength {
		return bad("schedulerKey", "is longer than any scheduler key")
	}
	return nil
}

func knownStatus(st automation.Status) bool {
	for _, s := range automation.AllStatuses {
		if s == st {
			return true
		}
	}
	return false
}

// Query is a Filter as the query parameters of a find (supportapi's GET scheduler-rows)
// carry it: text, each member under its parameter's name, an empty one not sent. The support
// client sends one as it was typed (the API validates it); Canonical is a parsed Filter's.
type Query struct {
	SchedulerKey   string
	SourceType     string
	SourceGuid     string
	BusinessUnitID string
	Status         string
	OnHold         string // "true" or "false"
	ScheduledFrom  string // RFC 3339
	ScheduledTo    string // RFC 3339
}

// Values are q's query parameters, the empty members left out.
func (q Query) Values() url.Values {
	v := url.Values{}
	for _, p := range [...][2]string{{"schedulerKey", q.SchedulerKey}, {"sourceType", q.SourceType}, {"sourceGuid", q.SourceGuid},
		{"businessUnitId", q.BusinessUnitID}, {"status", q.Status}, {"onHold", q.OnHold}, {"scheduledFrom", q.ScheduledFrom},
		{"scheduledTo", q.ScheduledTo}} {
		if p[1] != "" {
			v.Set(p[0], p[1])
		}
	}
	return v
}

// Canonical is the filter's stable text form (its Query, instants in UTC to the
// nanosecond); a page cursor is bound to it.
func (f Filter) Canonical() string {
	q := Query{SchedulerKey: f.SchedulerKey, SourceType: f.SourceType, SourceGuid: f.SourceGuid, BusinessUnitID: f.BusinessUnitID,
		Status: string(f.Status)}
	if f.OnHold != nil {
		q.OnHold = strconv.FormatBool(*f.OnHold)
	}
	if f.ScheduledFrom != nil {
		q.ScheduledFrom = f.ScheduledFrom.UTC().Format(time.RFC3339Nano)
	}
	if f.ScheduledTo != nil {
		q.ScheduledTo = f.ScheduledTo.UTC().Format(time.RFC3339Nano)
	}
	return q.Values().Encode()
}

// Position is where a page ended: the last row's Id (and ScheduledOn in schedule order).
type Position struct {
	ID int64      `json:"id"`
	On *time.Time `json:"on,omitempty"`
}

// Page orders.
const (
	OrderNewest      = "newest"      // by Id, newest first
	OrderScheduledOn = "scheduledOn" // by ScheduledOn then Id: only a scheduledOn range filters
)

// Page is one page of a find.
type Page struct {
	Rows  []Row  `json:"rows"`
	Order string `json:"order"`
	// Next is where the next page starts; nil on the last page.
	Next *Position `json:"-"`
}

func (f Filter) params(sc automation.Scope) store.SupportFindParams {
	return store.SupportFindParams{SchedulerKey: f.SchedulerKey, SourceEntityType: f.SourceType, SourceEntityGuid: f.SourceGuid,
		BusinessUnitID: f.BusinessUnitID, Status: f.Status, OnHold: f.OnHold, ScheduledFrom: f.ScheduledFrom,
		ScheduledTo: f.ScheduledTo, Scope: sc}
}

// Find returns one page of rows matching f that the scope sees: newest first, or in
// schedule order when only a scheduledOn range filters (Page.Order). after is where the
// previous page ended (nil: the first page); limit 0 means the configured page size.
// Errors: CodeMalformed for a bad filter or limit; CodeNotFound when f names a business unit
// outside the scope.
func (s *Service) Find(ctx context.Context, sc automation.Scope, f Filter, after *Position, limit int) (Page, error) {
	if err := f.Validate(); err != nil {
		return Page{}, err
	}
	if limit == 0 {
		limit = s.cfg.PageSize
	}
	if limit < 1 || limit > s.cfg.MaxPageSize {
		return Page{}, &automation.Error{Code: automation.CodeMalformed, Field: "limit",
			Message: "must be an integer from 1 to " + strconv.Itoa(s.cfg.MaxPageSize)}
	}
	if f.BusinessUnitID != "" {
		if err := s.knownUnit(ctx, sc, f.BusinessUnitID); err != nil {
			return Page{}, err
		}
	}
	p := f.params(sc)
	p.Limit = limit + 1 // one more tells whether a next page exists
	page := Page{Order: OrderNewest}
	if p.ByScheduledOn() {
		page.Order = OrderScheduledOn
	}
	if after != nil {
		if after.ID < 0 || (page.Order == OrderScheduledOn) != (after.On != nil) {
			return Page{}, &automation.Error{Code: automation.CodeMalformed, Field: "cursor", Message: "is not a cursor returned by this API"}
		}
		if page.Order == OrderScheduledOn {
			p.AfterOn, p.AfterID = after.On.UTC(), after.ID
		} else {
			p.BeforeID = after.ID
		}
	}
	rows, err := s.store.SupportSchedulerFind(ctx, p)
	if err != nil {
		return Page{}, err
	}
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		page.Next = &Position{ID: last.ID}
		if page.Order == OrderScheduledOn {
			on := last.ScheduledOn
			page.Next.On = &on
		}
	}
	views, err := s.views(ctx, sc, rows)
	if err != nil {
		return Page{}, err
	}
	page.Rows = views
	return page, nil
}

// views turns rows into Row views with their audit summaries (one bounded audit query).
func (s *Service) views(ctx context.Context, sc automation.Scope, rows []automation.SchedulerRow) ([]Row, error) {
	out := make([]Row, 0, len(rows))
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		if sc.Allows(r.BusinessUnitID) { // the query is scoped; this is belt and braces
			ids = append(ids, r.ID)
		}
	}
	byRow := map[int64][]store.SupportAuditRecord{}
	if len(ids) > 0 {
		recs, err := s.store.SupportAuditList(ctx, ids, store.MaxBatch)
		if err != nil {
			return nil, err
		}
		for _, a := range recs {
			byRow[a.SchedulerID] = append(byRow[a.SchedulerID], a)
		}
	}
	for _, r := range rows {
		if !sc.Allows(r.BusinessUnitID) {
			continue
		}
		out = append(out, rowView(r, byRow[r.ID]))
	}
	return out, nil
}
