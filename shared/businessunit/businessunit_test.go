package businessunit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

var t0 = time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)

func newAdmin(t *testing.T) (*businessunit.Admin, store.Store, *automation.ManualClock) {
	t.Helper()
	st := sqlitetest.Open(t)
	clock := automation.NewManualClock(t0)
	return &businessunit.Admin{Store: st, Clock: clock}, st, clock
}

// Every invalid input names its field; a valid Windows zone is stored mapped, with the
// original kept.
func TestInputRecord(t *testing.T) {
	t.Parallel()
	good := businessunit.Input{ID: "bu-syd", Name: " Sydney ", TimeZone: "AUS Eastern Standard Time", Roles: map[string][]string{"manager": {"m@example.com"}}}
	rec, err := good.Record(t0)
	if err != nil {
		t.Fatal(err)
	}
	if rec.TimeZoneID != "Australia/Sydney" || rec.TimeZoneIDGiven != "AUS Eastern Standard Time" || rec.Name != "Sydney" || !rec.UpdatedOn.Equal(t0) {
		t.Fatalf("record %+v", rec)
	}
	if rec, err := (businessunit.Input{ID: "bu-utc", Name: "UTC", TimeZone: "UTC"}).Record(t0); err != nil || rec.TimeZoneIDGiven != "" {
		t.Fatalf("an IANA id keeps no given id: %+v %v", rec, err)
	}
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "a@example.com"
		}
		return out
	}
	roles := map[string][]string{}
	for i := range businessunit.MaxRoles + 1 {
		roles[strings.Repeat("r", i+1)] = nil
	}
	cases := []struct {
		name  string
		edit  func(*businessunit.Input)
		field string
	}{
		{"no id", func(in *businessunit.Input) { in.ID = "" }, "id"},
		{"id with a space", func(in *businessunit.Input) { in.ID = "bu syd" }, "id"},
		{"blank name", func(in *businessunit.Input) { in.Name = "  " }, "name"},
		{"name with a newline", func(in *businessunit.Input) { in.Name = "Syd\nney" }, "name"},
		{"name too long", func(in *businessunit.Input) { in.Name = strings.Repeat("n", businessunit.MaxNameChars+1) }, "name"},
		{"unknown zone", func(in *businessunit.Input) { in.TimeZone = "Mars/Olympus" }, "timeZone"},
		{"too many roles", func(in *businessunit.Input) { in.Roles = roles }, "roles"},
		{"bad role name", func(in *businessunit.Input) { in.Roles = map[string][]string{"a b": {"x@example.com"}} }, "roles"},
		{"too many addresses", func(in *businessunit.Input) {
			in.Roles = map[string][]string{"all": many(businessunit.MaxRoleAddresses + 1)}
		}, "roles.all"},
		{"blank address", func(in *businessunit.Input) { in.Roles = map[string][]string{"m": {" "}} }, "roles.m[0]"},
	}
	for _, tc := range cases {
		in := good
		tc.edit(&in)
		_, err := in.Record(t0)
		if automation.CodeOf(err) != automation.CodeInvalidInput || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v (%s), want an invalid %s", tc.name, err, automation.CodeOf(err), tc.field)
		}
	}
	// An empty zone is "required", a zone in the wrong letter case gets a "did you mean"
	// (issue 33, item 10).
	for _, c := range []struct{ zone, want string }{
		{"", "timeZone: is required"},
		{"asia/ho_chi_minh", `unknown time zone "asia/ho_chi_minh" (did you mean "Asia/Ho_Chi_Minh"?)`},
		{"Australia/Sidney", `(did you mean "Australia/Sydney"?)`},
	} {
		in := good
		in.TimeZone = c.zone
		if _, err := in.Record(t0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("zone %q: %v, want %q", c.zone, err, c.want)
		}
	}
	if _, err := (businessunit.Input{ID: "bu", Name: "x", TimeZone: "UTC", Roles: map[string][]string{"all": many(businessunit.MaxRoleAddresses)}}).Record(t0); err != nil {
		t.Errorf("a role of MaxRoleAddresses addresses: %v", err)
	}
}

// Create, Get, List and Update answer a unit outside the caller's scope exactly as an
// unknown one (CodeNotFound), and Update honours If-Match and calls rezone only when the
// zone changes, storing nothing when it fails.
func TestAdminScopeVersionsAndRezone(t *testing.T) {
	t.Parallel()
	a, _, clock := newAdmin(t)
	ctx := context.Background()
	all, syd := automation.AllBusinessUnits(), automation.BusinessUnits("bu-syd")
	if _, err := a.Create(ctx, syd, businessunit.Input{ID: "bu-nyc", Name: "NYC", TimeZone: "America/New_York"}); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("create outside scope: %v", err)
	}
	rec, err := a.Create(ctx, syd, businessunit.Input{ID: "bu-syd", Name: "Sydney", TimeZone: "Australia/Sydney"})
	if err != nil || rec.Version != 1 {
		t.Fatalf("create: %+v %v", rec, err)
	}
	if _, err := a.Create(ctx, all, businessunit.Input{ID: "bu-syd", Name: "Again", TimeZone: "UTC"}); automation.CodeOf(err) != automation.CodeConflict {
		t.Fatalf("create twice: %v", err)
	}
	if _, err := a.Create(ctx, all, businessunit.Input{ID: "bu-nyc", Name: "NYC", TimeZone: "America/New_York"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"bu-nyc", "bu-unknown"} {
		if _, err := a.Get(ctx, syd, id); automation.CodeOf(err) != automation.CodeNotFound {
			t.Errorf("get %s from bu-syd's scope: %v", id, err)
		}
	}
	if list, err := a.List(ctx, syd, "", 10); err != nil || len(list) != 1 || list[0].ID != "bu-syd" {
		t.Fatalf("list in scope: %+v %v", list, err)
	}
	if list, err := a.List(ctx, all, "bu-nyc", 10); err != nil || len(list) != 1 || list[0].ID != "bu-syd" {
		t.Fatalf("list after bu-nyc: %+v %v", list, err)
	}

	calls := 0
	rezone := func(context.Context, time.Time) error { calls++; return nil }
	if _, err := a.Update(ctx, syd, "bu-nyc", businessunit.Input{Name: "x", TimeZone: "UTC"}, 1, rezone); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("update outside scope: %v", err)
	}
	if _, err := a.Update(ctx, syd, "bu-syd", businessunit.Input{Name: "x", TimeZone: "UTC"}, 7, rezone); automation.CodeOf(err) != automation.CodePreconditionFailed {
		t.Fatalf("stale If-Match: %v", err)
	}
	if _, err := a.Update(ctx, syd, "bu-syd", businessunit.Input{ID: "bu-other", Name: "x", TimeZone: "UTC"}, 1, rezone); automation.CodeOf(err) != automation.CodeInvalidInput {
		t.Fatalf("id change: %v", err)
	}
	ch, err := a.Update(ctx, syd, "bu-syd", businessunit.Input{Name: "Sydney CBD", TimeZone: "Australia/Sydney"}, 1, rezone)
	if err != nil || ch.ZoneChanged() || calls != 0 || ch.After.Version != 2 || ch.After.Name != "Sydney CBD" {
		t.Fatalf("rename: %+v %v, rezone called %d times", ch, err, calls)
	}
	boom := errors.New("boom")
	if _, err := a.Update(ctx, syd, "bu-syd", businessunit.Input{Name: "Perth", TimeZone: "Australia/Perth"}, 2,
		func(context.Context, time.Time) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("failing rezone: %v", err)
	}
	if cur, _ := a.Get(ctx, syd, "bu-syd"); cur.Version != 2 || cur.TimeZoneID != "Australia/Sydney" {
		t.Fatalf("a failing rezone stored %+v", cur)
	}
	clock.Advance(time.Minute)
	var at time.Time
	ch, err = a.Update(ctx, syd, "bu-syd", businessunit.Input{Name: "Perth", TimeZone: "Australia/Perth"}, 2,
		func(_ context.Context, now time.Time) error { at = now; return nil })
	if err != nil || !ch.ZoneChanged() || !at.Equal(t0.Add(time.Minute)) || !ch.At.Equal(at) || ch.After.TimeZoneID != "Australia/Perth" || ch.Before.TimeZoneID != "Australia/Sydney" {
		t.Fatalf("zone change: %+v %v, rezone at %v", ch, err, at)
	}
}

// InScope answers a unit outside the scope exactly as an unknown one, without reading it.
func TestInScope(t *testing.T) {
	t.Parallel()
	a, st, _ := newAdmin(t)
	ctx := context.Background()
	if _, err := a.Create(ctx, automation.AllBusinessUnits(), businessunit.Input{ID: "bu-syd", Name: "Sydney", TimeZone: "Australia/Sydney"}); err != nil {
		t.Fatal(err)
	}
	if bu, err := businessunit.InScope(ctx, st, automation.BusinessUnits("bu-syd"), "bu-syd"); err != nil || bu.TimeZoneID != "Australia/Sydney" {
		t.Fatalf("in scope: %+v %v", bu, err)
	}
	for _, tc := range []struct {
		sc automation.Scope
		id string
	}{{automation.BusinessUnits("bu-nyc"), "bu-syd"}, {automation.AllBusinessUnits(), "bu-unknown"}, {automation.Scope{}, "bu-syd"}} {
		if bu, err := businessunit.InScope(ctx, st, tc.sc, tc.id); !errors.Is(err, store.ErrNotFound) || bu.ID != "" {
			t.Errorf("InScope(%v, %s) = %+v, %v; want store.ErrNotFound", tc.sc, tc.id, bu, err)
		}
	}
}

func TestZoneOf(t *testing.T) {
	t.Parallel()
	z, err := businessunit.ZoneOf(store.BusinessUnit{ID: "bu-syd", TimeZoneID: "Australia/Sydney"})
	if err != nil || z.Loc == nil || z.Loc.String() != "Australia/Sydney" || z.BusinessUnitID != "bu-syd" {
		t.Fatalf("%+v %v", z, err)
	}
	if _, err := businessunit.ZoneOf(store.BusinessUnit{ID: "bu-mars", TimeZoneID: "Mars/Olympus"}); automation.CodeOf(err) != automation.CodeInvalidInput ||
		!strings.Contains(err.Error(), "bu-mars") {
		t.Fatalf("unusable zone: %v", err)
	}
}
