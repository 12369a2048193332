package businessunit

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/store"
)

// Input is a business unit as a client sends it. TimeZone is an IANA id or a Windows id
// ("AUS Eastern Standard Time"), mapped through CLDR (localtime.ResolveZoneID).
type Input struct {
	ID       string              `json:"id"`
	Name     string              `json:"name"`
	TimeZone string              `json:"timeZone"`
	Roles    map[string][]string `json:"roles,omitempty"`
	// UpdatedBy is who writes (not in the body): the operator's principal first, set by the
	// API from its caller (docs/security.md#audit) and stored with the unit
	// (store.BusinessUnitRecord.UpdatedBy), bounded by automation.OperatorName.
	UpdatedBy string `json:"-"`
}

// Bounds of one business unit.
const (
	// MaxRoles bounds the role lists of one business unit.
	MaxRoles = 50
	// MaxRoleAddresses bounds the addresses of one role: a role is expanded into the
	// recipients of one occurrence, which the reminder pipeline bounds to the same number
	// (reminder.MaxRecipients; a test there checks the two agree).
	MaxRoleAddresses = 100
	// MaxNameChars bounds a unit's display name: UTF-16 code units, as the SQL Server
	// nvarchar columns count them.
	MaxNameChars = automation.MaxDisplayNameUnits
)

// idRE is a unit id and a role name: 1-100 letters, digits and ._~@+/-.
var idRE = regexp.MustCompile(`^[A-Za-z0-9._~@+/-]{1,100}$`)

// validName is the one display-name rule, automation.ValidDisplayName.
func validName(s string) bool { return automation.ValidDisplayName(s) }

// Record validates in and returns the record to store, updated at now: the zone mapped to
// its IANA id (TimeZoneIDGiven keeps a Windows id as given), the name trimmed. Errors:
// automation.Invalid naming each bad field (automation.InvalidFields).
func (in Input) Record(now time.Time) (store.BusinessUnitRecord, error) {
	var errs []error
	bad := func(field, f string, a ...any) { errs = append(errs, automation.Invalid(field, f, a...)) }
	if !idRE.MatchString(in.ID) {
		bad("id", "is required (1-100 letters, digits, ._~@+/-)")
	}
	if !validName(in.Name) {
		bad("name", "is required: 1..%d characters, no control or bidirectional-text characters", MaxNameChars)
	}
	iana, windows, err := localtime.ResolveZoneID(in.TimeZone)
	switch {
	case err == nil:
	case strings.TrimSpace(in.TimeZone) == "":
		bad("timeZone", "is required: an IANA id (\"Australia/Sydney\") or a Windows id (\"AUS Eastern Standard Time\")")
	default:
		hint := ""
		if near := automation.Suggest(in.TimeZone, localtime.ZoneIDs()); near != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", near)
		}
		bad("timeZone", "unknown time zone %q%s: use an IANA id (\"Australia/Sydney\") or a Windows id (\"AUS Eastern Standard Time\")", in.TimeZone, hint)
	}
	if len(in.Roles) > MaxRoles {
		bad("roles", "has %d roles, at most %d", len(in.Roles), MaxRoles)
	}
	for name, list := range in.Roles {
		if !idRE.MatchString(name) {
			bad("roles", "role name %q must use letters, digits and ._~@+/-", name)
		}
		if len(list) > MaxRoleAddresses {
			bad("roles."+name, "lists %d addresses, more than %d", len(list), MaxRoleAddresses)
		}
		for i, addr := range list {
			if strings.TrimSpace(addr) == "" || strings.IndexFunc(addr, unicode.IsControl) >= 0 || len(addr) > 320 {
				bad(fmt.Sprintf("roles.%s[%d]", name, i), "must be a non-empty address without control characters")
			}
		}
	}
	if err := automation.InvalidFields(errs...); err != nil {
		return store.BusinessUnitRecord{}, err
	}
	rec := store.BusinessUnitRecord{BusinessUnit: store.BusinessUnit{ID: in.ID, Name: strings.TrimSpace(in.Name), TimeZoneID: iana},
		Roles: in.Roles, UpdatedOn: now, UpdatedBy: automation.OperatorName(in.UpdatedBy)}
	if windows {
		rec.TimeZoneIDGiven = in.TimeZone
	}
	return rec, nil
}

// Store is what Admin needs of the store.
type Store interface {
	BusinessUnitInsert(ctx context.Context, bu store.BusinessUnitRecord) error
	BusinessUnitGetRecord(ctx context.Context, id string) (store.BusinessUnitRecord, error)
	BusinessUnitUpdate(ctx context.Context, bu store.BusinessUnitRecord, expectedVersion int64) (store.BusinessUnitRecord, error)
	BusinessUnitList(ctx context.Context, p store.BusinessUnitListParams) ([]store.BusinessUnitRecord, error)
}

// Admin manages business units (the BusinessUnitsApi routes). Every call takes the
// caller's business-unit scope; a unit outside it is CodeNotFound, never a different answer.
type Admin struct {
	Store Store
	Clock automation.Clock
}

// NotFound is the answer for a unit that is unknown or outside the caller's scope (the same
// answer for both, so ids cannot be probed): CodeNotFound, 404.
func NotFound(id string) error {
	return &automation.Error{Code: automation.CodeNotFound, Message: fmt.Sprintf("business unit %q not found", id)}
}

// VersionMismatch is the answer to a write whose If-Match (ifMatch) is not the current
// Version: CodePreconditionFailed (412) on field If-Match.
func VersionMismatch(current, ifMatch int64) error {
	return &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match",
		Message: fmt.Sprintf("the resource is at version \"%d\", not \"%d\"; read it again", current, ifMatch)}
}

// Create validates and stores a new business unit. Errors: Invalid (422) with field
// errors, CodeNotFound when the id is outside the caller's scope, CodeConflict when it
// exists.
func (a *Admin) Create(ctx context.Context, sc automation.Scope, in Input) (store.BusinessUnitRecord, error) {
	rec, err := in.Record(a.Clock.Now())
	if err != nil {
		return rec, err
	}
	if !sc.Allows(rec.ID) {
		return rec, NotFound(rec.ID)
	}
	if err := a.Store.BusinessUnitInsert(ctx, rec); err != nil {
		if errors.Is(err, store.ErrConflict) {
			// The store's error is not wrapped: its text (dialect, statement) would reach the
			// problem detail.
			return rec, &automation.Error{Code: automation.CodeConflict, Field: "id", Message: fmt.Sprintf("business unit %q already exists", rec.ID)}
		}
		return rec, err
	}
	return a.Store.BusinessUnitGetRecord(ctx, rec.ID)
}

// Get returns a business unit in the caller's scope, or CodeNotFound.
func (a *Admin) Get(ctx context.Context, sc automation.Scope, id string) (store.BusinessUnitRecord, error) {
	if !sc.Allows(id) {
		return store.BusinessUnitRecord{}, NotFound(id)
	}
	rec, err := a.Store.BusinessUnitGetRecord(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return rec, NotFound(id)
	}
	return rec, err
}

// List pages business units in the caller's scope by id: at most limit (1..store.MaxBatch)
// after afterID.
func (a *Admin) List(ctx context.Context, sc automation.Scope, afterID string, limit int) ([]store.BusinessUnitRecord, error) {
	return a.Store.BusinessUnitList(ctx, store.BusinessUnitListParams{Scope: sc, AfterID: afterID, Limit: limit})
}

// Change is what Update did: the unit before and after, and the instant of the change.
type Change struct {
	Before, After store.BusinessUnitRecord
	At            time.Time
}

// ZoneChanged reports whether the stored time zone changed.
func (c Change) ZoneChanged() bool { return c.After.TimeZoneID != c.Before.TimeZoneID }

// Update replaces business unit id with in when its Version is ifMatch. When the new zone
// differs from the stored one, rezone (if not nil) runs first, at the change's instant: a
// domain records there the work the new zone owes its rows, and its error stores nothing.
// Errors: as Get; Invalid when in is invalid or names another id (an empty in.ID is id);
// CodePreconditionFailed for a stale ifMatch (nothing changed); rezone's; the store's. On
// error, Change.Before is the unit as read (when it was).
func (a *Admin) Update(ctx context.Context, sc automation.Scope, id string, in Input, ifMatch int64,
	rezone func(ctx context.Context, at time.Time) error) (Change, error) {
	cur, err := a.Get(ctx, sc, id)
	if err != nil {
		return Change{Before: cur}, err
	}
	ch := Change{Before: cur}
	if in.ID == "" {
		in.ID = id
	}
	if in.ID != id {
		return ch, automation.Invalid("id", "cannot change (%q in the body, %q in the path)", in.ID, id)
	}
	if cur.Version != ifMatch {
		return ch, VersionMismatch(cur.Version, ifMatch)
	}
	ch.At = a.Clock.Now()
	rec, err := in.Record(ch.At)
	if err != nil {
		return ch, err
	}
	if rec.TimeZoneID != cur.TimeZoneID && rezone != nil {
		if err := rezone(ctx, ch.At); err != nil {
			return ch, err
		}
	}
	out, err := a.Store.BusinessUnitUpdate(ctx, rec, ifMatch)
	if err != nil {
		return ch, err
	}
	ch.After = out
	return ch, nil
}

// Reader is the store read of a unit every domain shares.
type Reader interface {
	// BusinessUnitGet returns store.ErrNotFound for an unknown id.
	BusinessUnitGet(ctx context.Context, id string) (store.BusinessUnit, error)
}

// InScope reads business unit id for a caller whose scope is sc. Errors: store.ErrNotFound
// (unwrapped) when the unit is unknown or outside sc, so a caller answers both alike; the
// store's.
func InScope(ctx context.Context, r Reader, sc automation.Scope, id string) (store.BusinessUnit, error) {
	if !sc.Allows(id) {
		return store.BusinessUnit{}, store.ErrNotFound
	}
	return r.BusinessUnitGet(ctx, id)
}

// Zone is a business unit with its loaded time zone.
type Zone struct {
	BusinessUnitID string
	TimeZoneID     string
	Loc            *time.Location
}

// ZoneOf loads a business unit's zone. Errors: automation.Invalid on field
// "businessunitid" naming the unit when its zone cannot be loaded (bad input, not a retry).
func ZoneOf(bu store.BusinessUnit) (Zone, error) {
	loc, err := localtime.LoadZone(bu.TimeZoneID)
	if err != nil {
		return Zone{}, automation.Invalid("businessunitid", "business unit %q has an unusable time zone: %v", bu.ID, err)
	}
	return Zone{BusinessUnitID: bu.ID, TimeZoneID: bu.TimeZoneID, Loc: loc}, nil
}
