package preference_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/automation/automationtest"
	"github.com/automation-platform/automation/shared/preference"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

var utc = automationtest.Instant

func bptr(b bool) *bool { return &b }

type fixture struct {
	st    store.Store
	clock *automation.ManualClock
	svc   *preference.Service
}

func newFixture(t *testing.T, unitZone string) *fixture {
	t.Helper()
	st := sqlitetest.Open(t)
	if err := st.BusinessUnitUpsert(context.Background(), store.BusinessUnit{ID: "bu-1", Name: "Unit", TimeZoneID: unitZone}); err != nil {
		t.Fatal(err)
	}
	clock := automation.NewManualClock(utc("2026-10-01T00:00:00Z"))
	return &fixture{st: st, clock: clock, svc: &preference.Service{Store: st, Clock: clock, UnitCacheTTL: -1}}
}

func job(channel, recipient, template, payload string) store.NotificationJob {
	return store.NotificationJob{BusinessUnitID: "bu-1", Channel: channel, Recipient: recipient, Template: template, PayloadJSON: payload}
}

// The quiet-hours rule applied to deliveries. Expected instants come from the team's DST
// oracle (tzoracle.py, Python's zoneinfo), not from our Go code: e.g.
// `tzoracle.py Australia/Sydney 2026-10-04 02:30` → 2026-10-03T16:30:00Z (an end in the
// spring-forward gap moves forward), `tzoracle.py Australia/Sydney 2026-04-05 02:30` →
// 2026-04-04T15:30:00Z (an end in the fall-back overlap takes the first instant),
// `tzoracle.py Europe/London 2026-03-29 01:30` → 01:30Z = 02:30 BST.
func TestCheckQuietHoursTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                   string
		unitZone               string
		unitStart, unitEnd     string
		unitWindowZone         string
		rcptStart, rcptEnd     string // "" = none of its own
		rcptZone               string
		template, payload, now string
		channel                string // "" = sms
		wait                   bool
		until, reason          string
	}{
		{name: "inside the unit's window, the unit's zone", unitZone: "Australia/Sydney", unitStart: "21:00", unitEnd: "08:00",
			now: "2026-10-03T12:00:00Z", wait: true, until: "2026-10-03T21:00:00Z",
			reason: "waiting for quiet hours to end at 2026-10-04 08:00 (Australia/Sydney)"},
		{name: "outside the window sends", unitZone: "Australia/Sydney", unitStart: "21:00", unitEnd: "08:00", now: "2026-10-03T21:00:00Z"},
		{name: "transactional passes (payload category)", unitZone: "Australia/Sydney", unitStart: "21:00", unitEnd: "08:00",
			payload: `{"category":"service"}`, now: "2026-10-03T12:00:00Z"},
		{name: "transactional passes (template's category)", unitZone: "Australia/Sydney", unitStart: "21:00", unitEnd: "08:00",
			template: "password-expiry", now: "2026-10-03T12:00:00Z"},
		{name: "spring-forward day: the end in the gap moves forward", unitZone: "Australia/Sydney", unitStart: "22:00", unitEnd: "02:30",
			now: "2026-10-03T15:30:00Z", wait: true, until: "2026-10-03T16:30:00Z",
			reason: "waiting for quiet hours to end at 2026-10-04 03:30 (Australia/Sydney)"},
		{name: "fall-back day: the end in the overlap takes the first instant", unitZone: "Australia/Sydney", unitStart: "22:00", unitEnd: "02:30",
			now: "2026-04-04T15:00:00Z", wait: true, until: "2026-04-04T15:30:00Z",
			reason: "waiting for quiet hours to end at 2026-04-05 02:30 (Australia/Sydney)"},
		{name: "fall-back day: after the first 02:30 it sends", unitZone: "Australia/Sydney", unitStart: "22:00", unitEnd: "02:30",
			now: "2026-04-04T15:45:00Z"},
		{name: "the recipient's zone wins over the unit's", unitZone: "Asia/Ho_Chi_Minh", unitStart: "21:00", unitEnd: "08:00",
			rcptZone: "Europe/London", now: "2026-03-29T01:00:00Z", wait: true, until: "2026-03-29T07:00:00Z",
			reason: "waiting for quiet hours to end at 2026-03-29 08:00 (Europe/London)"},
		{name: "London spring-forward: an end in the gap", unitZone: "Europe/London", unitStart: "23:00", unitEnd: "01:30",
			now: "2026-03-29T00:30:00Z", wait: true, until: "2026-03-29T01:30:00Z",
			reason: "waiting for quiet hours to end at 2026-03-29 02:30 (Europe/London)"},
		{name: "the recipient's own window", unitZone: "Asia/Ho_Chi_Minh", rcptStart: "12:00", rcptEnd: "13:00",
			now: "2026-10-05T05:30:00Z", wait: true, until: "2026-10-05T06:00:00Z",
			reason: "waiting for quiet hours to end at 2026-10-05 13:00 (Asia/Ho_Chi_Minh)"},
		{name: "the unit's window in its own zone", unitZone: "UTC", unitStart: "21:00", unitEnd: "08:00", unitWindowZone: "Asia/Ho_Chi_Minh",
			now: "2026-10-04T20:00:00Z", wait: true, until: "2026-10-05T01:00:00Z",
			reason: "waiting for quiet hours to end at 2026-10-05 08:00 (Asia/Ho_Chi_Minh)"},
		{name: "New York fall-back, ambiguous end", unitZone: "America/New_York", unitStart: "21:00", unitEnd: "01:30",
			now: "2026-11-01T01:00:00Z", wait: true, until: "2026-11-01T05:30:00Z",
			reason: "waiting for quiet hours to end at 2026-11-01 01:30 (America/New_York)"},
		{name: "no window anywhere sends", unitZone: "Australia/Sydney", now: "2026-10-03T12:00:00Z"},
		{name: "a webhook is not held (a system, not a person)", unitZone: "Australia/Sydney", unitStart: "21:00", unitEnd: "08:00",
			channel: "webhook", now: "2026-10-03T12:00:00Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, c.unitZone)
			ctx := context.Background()
			if c.unitStart != "" {
				if _, err := f.svc.SetUnitQuietHours(ctx, "bu-1", "jane", preference.QuietHoursInput{Start: c.unitStart, End: c.unitEnd, TimeZoneID: c.unitWindowZone}); err != nil {
					t.Fatal(err)
				}
			}
			if c.rcptStart != "" || c.rcptZone != "" {
				if _, err := f.svc.Set(ctx, "bu-1", "+61412345678", "jane", preference.SourceAPI, preference.Change{
					QuietHours: &preference.QuietHoursInput{Start: c.rcptStart, End: c.rcptEnd, TimeZoneID: c.rcptZone}}); err != nil {
					t.Fatal(err)
				}
			}
			payload := c.payload
			if payload == "" {
				payload = "{}"
			}
			tpl := c.template
			if tpl == "" {
				tpl = "points-earned"
			}
			ch := c.channel
			if ch == "" {
				ch = "sms"
			}
			d, err := f.svc.Check(ctx, job(ch, "+61412345678", tpl, payload), utc(c.now))
			if err != nil {
				t.Fatal(err)
			}
			if d.Skip || d.Wait != c.wait {
				t.Fatalf("decision %+v, want wait %v", d, c.wait)
			}
			if c.wait && (!d.Until.Equal(utc(c.until)) || d.Reason != c.reason) {
				t.Fatalf("until %s %q, want %s %q", d.Until.Format(time.RFC3339), d.Reason, c.until, c.reason)
			}
		})
	}
}

// Preferences decide per channel and category; transactional categories pass an opt-out.
func TestCheckPreferencesTable(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "Australia/Sydney")
	ctx := context.Background()
	if _, err := f.svc.Set(ctx, "bu-1", " Linh@Example.TEST ", "jane", preference.SourceAPI, preference.Change{Preferences: []preference.Item{
		{Channel: "email", Category: "marketing", OptedIn: bptr(false)},
		{Channel: "email", Category: "loyalty", OptedIn: bptr(true)},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.OptOut(ctx, "bu-1", "+61412345678", "sms", "", preference.SourceSMSStop, "+61412345678"); err != nil {
		t.Fatal(err)
	}
	now := utc("2026-10-03T02:00:00Z")
	for _, c := range []struct {
		name                         string
		channel, recipient, template string
		payload                      string
		skip                         bool
		reason                       string
	}{
		{"opted out of marketing e-mail (default category)", "email", "linh@example.test", "points-earned", "{}", true,
			"the recipient opted out of marketing email messages (api, 2026-10-01T00:00:00Z)"},
		{"the address's case does not matter", "email", "LINH@example.test", "points-earned", "{}", true, ""},
		{"loyalty e-mail stays opted in", "email", "linh@example.test", "points-earned", `{"category":"loyalty"}`, false, ""},
		{"transactional e-mail passes the opt-out", "email", "linh@example.test", "password-expiry", "{}", false, ""},
		{"another channel is not affected", "push", "linh@example.test", "points-earned", "{}", false, ""},
		{"STOP opted the number out of every marketing category", "sms", "+61412345678", "points-earned", `{"category":"loyalty"}`, true,
			"the recipient opted out of loyalty sms messages (sms-stop, 2026-10-01T00:00:00Z)"},
		{"STOP leaves transactional SMS", "sms", "+61412345678", "x", `{"category":"security"}`, false, ""},
		{"an unknown payload category is held to the default", "email", "linh@example.test", "x", `{"category":"nope"}`, true, ""},
		{"another recipient is not affected", "email", "tom@example.test", "points-earned", "{}", false, ""},
	} {
		d, err := f.svc.Check(ctx, job(c.channel, c.recipient, c.template, c.payload), now)
		if err != nil {
			t.Fatal(err)
		}
		if d.Skip != c.skip || d.Wait || (c.reason != "" && d.Reason != c.reason) {
			t.Errorf("%s: %+v, want skip %v %q", c.name, d, c.skip, c.reason)
		}
	}
}

// Bad input names the member and writes nothing.
func TestSetRefusesBadInputNamingTheMember(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "Australia/Sydney")
	ctx := context.Background()
	for _, c := range []struct {
		name      string
		recipient string
		change    preference.Change
		unit      *preference.QuietHoursInput
		fields    []string
	}{
		{name: "unknown category", recipient: "a@example.test", change: preference.Change{Preferences: []preference.Item{{Channel: "email", Category: "spam", OptedIn: bptr(false)}}},
			fields: []string{"preferences[0].category"}},
		{name: "unknown channel and missing optedIn", recipient: "a@example.test", change: preference.Change{Preferences: []preference.Item{{Channel: "fax", Category: "marketing"}}},
			fields: []string{"preferences[0].channel", "preferences[0].optedIn"}},
		{name: "opt-out of a transactional category", recipient: "a@example.test", change: preference.Change{Preferences: []preference.Item{{Channel: "email", Category: "service", OptedIn: bptr(false)}}},
			fields: []string{"preferences[0].optedIn"}},
		{name: "equal ends", recipient: "a@example.test", change: preference.Change{QuietHours: &preference.QuietHoursInput{Start: "21:00", End: "21:00"}},
			fields: []string{"quietHours.end"}},
		{name: "zone that does not exist", recipient: "a@example.test", change: preference.Change{QuietHours: &preference.QuietHoursInput{Start: "21:00", End: "08:00", TimeZoneID: "Mars/Olympus_Mons"}},
			fields: []string{"quietHours.timeZoneId"}},
		{name: "bad recipient id", recipient: "a b", change: preference.Change{}, fields: []string{"recipientId"}},
		{name: "unit: equal ends", unit: &preference.QuietHoursInput{Start: "08:00", End: "08:00"}, fields: []string{"end"}},
		{name: "unit: unknown zone and no start", unit: &preference.QuietHoursInput{End: "08:00", TimeZoneID: "Nowhere/Town"}, fields: []string{"timeZoneId", "start"}},
	} {
		var err error
		if c.unit != nil {
			_, err = f.svc.SetUnitQuietHours(ctx, "bu-1", "jane", *c.unit)
		} else {
			_, err = f.svc.Set(ctx, "bu-1", c.recipient, "jane", preference.SourceAPI, c.change)
		}
		var ae *automation.Error
		if !errors.As(err, &ae) || ae.Code != automation.CodeInvalidInput {
			t.Errorf("%s: %v, want invalid input", c.name, err)
			continue
		}
		for _, field := range c.fields {
			if !strings.Contains(err.Error(), field) {
				t.Errorf("%s: %v does not name %s", c.name, err, field)
			}
		}
	}
	if l, _ := f.st.PreferenceList(ctx, "bu-1", "a@example.test"); len(l) != 0 {
		t.Fatalf("a refused change wrote %+v", l)
	}
	if _, err := f.st.QuietHoursGet(ctx, "bu-1", ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused unit window was stored: %v", err)
	}
	if _, err := f.st.QuietHoursGet(ctx, "bu-1", "a@example.test"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused recipient window was stored: %v", err)
	}
}

func TestRegistryValidates(t *testing.T) {
	t.Parallel()
	if err := preference.DefaultRegistry().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ json, field string }{
		{`{"categories":[{"name":"Marketing"}],"default":"Marketing"}`, "categories[0].name"},
		{`{"categories":[{"name":"a"}],"default":"b"}`, "default"},
		{`{"categories":[{"name":"a","templates":["t"]},{"name":"b","templates":["t"]}],"default":"a"}`, "categories[1].templates[0]"},
		{`{"categories":[{"name":"a"}],"default":"a","extra":1}`, "categories"},
		{`{"categories":[{"name":"a"}],"default":"a"} {"default":"b"}`, "categories"},
	} {
		if _, err := preference.ParseRegistry([]byte(c.json)); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v, want an error naming %s", c.json, err, c.field)
		}
	}
}

func TestUnsubscribeTokenRoundTripAndTamper(t *testing.T) {
	t.Parallel()
	secret := []byte("0123456789abcdef0123456789abcdef")
	u := preference.Unsubscribe{BusinessUnitID: "bu-1", RecipientID: "Linh@Example.test", Channel: "email", Category: "marketing"}
	tok := preference.UnsubscribeToken(secret, u)
	got, err := preference.ParseUnsubscribeToken(secret, tok)
	if err != nil || got.RecipientID != "linh@example.test" || got.Category != "marketing" || got.BusinessUnitID != "bu-1" {
		t.Fatalf("%+v %v", got, err)
	}
	other := preference.UnsubscribeToken(secret, preference.Unsubscribe{BusinessUnitID: "bu-1", RecipientID: "tom@example.test", Channel: "email"})
	p1, _, _ := strings.Cut(other, ".")
	_, s0, _ := strings.Cut(tok, ".")
	for _, bad := range []string{"", "x", tok + "x", p1 + "." + s0, strings.Replace(tok, ".", "", 1)} {
		if _, err := preference.ParseUnsubscribeToken(secret, bad); !errors.Is(err, preference.ErrBadToken) {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
	if _, err := preference.ParseUnsubscribeToken([]byte("another secret of enough length!"), tok); !errors.Is(err, preference.ErrBadToken) {
		t.Error("a token under another secret was accepted")
	}
}

// Removing a recipient's own window through Set (quietHours with no ends and no zone) takes
// the row that named its last writer, so the operator is recorded in OperatorAudit, in the
// delete's transaction; a removal when there is no window records nothing.
func TestRemovingARecipientsWindowRecordsTheOperator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, "Asia/Ho_Chi_Minh")
	remove := preference.Change{QuietHours: &preference.QuietHoursInput{}}
	if _, err := f.svc.Set(ctx, "bu-1", "a@example.test", "key:ops / jane", preference.SourceAPI, remove); err != nil {
		t.Fatal(err)
	}
	if got, err := f.st.OperatorAuditList(ctx, "bu-1", 10); err != nil || len(got) != 0 {
		t.Fatalf("removing no window recorded %+v (%v)", got, err)
	}
	if _, err := f.svc.Set(ctx, "bu-1", "a@example.test", "key:ops / jane", preference.SourceAPI, preference.Change{
		QuietHours: &preference.QuietHoursInput{Start: "21:00", End: "08:00"}}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	if _, err := f.svc.Set(ctx, "bu-1", " A@Example.TEST ", "key:ops / linh", preference.SourceAPI, remove); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.QuietHoursGet(ctx, "bu-1", "a@example.test"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the window is still stored: %v", err)
	}
	got, err := f.st.OperatorAuditList(ctx, "bu-1", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := store.OperatorAudit{At: utc("2026-10-01T00:01:00Z"), BusinessUnitID: "bu-1", Action: store.AuditQuietHoursDelete,
		Target: "recipient:a@example.test", Operator: "key:ops / linh"}
	if len(got) != 1 || !got[0].At.Equal(want.At) || got[0].BusinessUnitID != want.BusinessUnitID || got[0].Action != want.Action ||
		got[0].Target != want.Target || got[0].Operator != want.Operator {
		t.Fatalf("audit rows %+v, want one like %+v", got, want)
	}
}
