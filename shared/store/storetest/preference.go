package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// runPreference checks store.PreferenceStore and the Skipped and Wait outcomes of
// NotificationFinish (docs/channels.md#recipient-preferences).
func runPreference(t *testing.T, open Opener) {
	t.Run("SetIsIdempotentAndKeepsTheChange", func(t *testing.T) { testPreferenceSet(t, open) })
	t.Run("BoundedPerRecipient", func(t *testing.T) { testPreferenceBound(t, open) })
	t.Run("QuietHoursPutGetDelete", func(t *testing.T) { testQuietHours(t, open) })
	t.Run("FinishSkippedAndWait", func(t *testing.T) { testFinishSkippedWait(t, open) })
}

func pref(channel, category string, in bool, source string) store.RecipientPreference {
	return store.RecipientPreference{Channel: channel, Category: category, OptedIn: in, Source: source, ChangedBy: "jane"}
}

func testPreferenceSet(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	rcpt := strings.Repeat("r", store.MaxRecipientIDLength-len("@example.test")) + "@example.test"
	got, err := s.PreferenceSet(ctx, store.PreferenceSetParams{BusinessUnitID: "bu-1", RecipientID: rcpt, Now: T0,
		Items: []store.RecipientPreference{pref("sms", "marketing", false, "sms-stop"), pref("email", "marketing", true, "api")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Channel != "email" || got[1].Channel != "sms" || got[1].OptedIn || got[1].Source != "sms-stop" ||
		!got[1].ChangedOn.Equal(T0) || got[1].ChangedOn.Location() != time.UTC || got[1].Version != 1 || got[0].RecipientID != rcpt {
		t.Fatalf("after the first set: %+v", got)
	}
	// The same opt-out again, later and from another source: nothing changes.
	again, err := s.PreferenceSet(ctx, store.PreferenceSetParams{BusinessUnitID: "bu-1", RecipientID: rcpt, Now: T0.Add(time.Hour),
		Items: []store.RecipientPreference{pref("sms", "marketing", false, "api")}})
	if err != nil || len(again) != 2 || again[1] != got[1] {
		t.Fatalf("repeat = %+v, %v; want %+v unchanged", again, err, got[1])
	}
	// A change back records the new source, time and version.
	back, err := s.PreferenceSet(ctx, store.PreferenceSetParams{BusinessUnitID: "bu-1", RecipientID: rcpt, Now: T0.Add(2 * time.Hour),
		Items: []store.RecipientPreference{pref("sms", "marketing", true, "api")}})
	if err != nil || !back[1].OptedIn || back[1].Source != "api" || !back[1].ChangedOn.Equal(T0.Add(2*time.Hour)) || back[1].Version != 2 {
		t.Fatalf("opt back in = %+v, %v", back, err)
	}
	// Another unit and another recipient see nothing.
	for _, k := range [][2]string{{"bu-2", rcpt}, {"bu-1", "other@example.test"}} {
		if l, err := s.PreferenceList(ctx, k[0], k[1]); err != nil || len(l) != 0 {
			t.Fatalf("PreferenceList(%v) = %+v, %v; want none", k, l, err)
		}
	}
	if _, err := s.PreferenceSet(ctx, store.PreferenceSetParams{BusinessUnitID: "bu-1", RecipientID: rcpt + "x", Now: T0,
		Items: []store.RecipientPreference{pref("sms", "marketing", false, "api")}}); !errors.Is(err, store.ErrValueTooLarge) {
		t.Fatalf("a recipient id over the bound: %v, want ErrValueTooLarge", err)
	}
}

func testPreferenceBound(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	items := make([]store.RecipientPreference, store.MaxPreferencesPerRecipient)
	for i := range items {
		items[i] = pref("sms", fmt.Sprintf("c%03d", i), false, "api")
	}
	if _, err := s.PreferenceSet(ctx, store.PreferenceSetParams{BusinessUnitID: "bu-1", RecipientID: "+61412345678", Now: T0, Items: items}); err != nil {
		t.Fatal(err)
	}
	// One more row is refused and nothing of the call is written (all or nothing).
	_, err := s.PreferenceSet(ctx, store.PreferenceSetParams{BusinessUnitID: "bu-1", RecipientID: "+61412345678", Now: T0,
		Items: []store.RecipientPreference{pref("sms", "c000", true, "api"), pref("email", "new", false, "api")}})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("one over the bound: %v, want ErrConflict", err)
	}
	l, err := s.PreferenceList(ctx, "bu-1", "+61412345678")
	if err != nil || len(l) != store.MaxPreferencesPerRecipient || l[0].OptedIn {
		t.Fatalf("after the refused call: %d rows, first %+v, %v; want the bound, c000 still opted out", len(l), l[0], err)
	}
}

func testQuietHours(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	if _, err := s.QuietHoursGet(ctx, "bu-1", ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("none yet: %v", err)
	}
	unit, err := s.QuietHoursPut(ctx, store.QuietHoursRow{BusinessUnitID: "bu-1", Start: "21:00", End: "08:00", ChangedBy: "jane", ChangedOn: T0})
	if err != nil || unit.Start != "21:00" || unit.End != "08:00" || unit.TimeZoneID != "" || unit.Version != 1 || !unit.ChangedOn.Equal(T0) {
		t.Fatalf("unit row = %+v, %v", unit, err)
	}
	r, err := s.QuietHoursPut(ctx, store.QuietHoursRow{BusinessUnitID: "bu-1", RecipientID: "+61412345678", TimeZoneID: "Australia/Sydney", ChangedBy: "jane", ChangedOn: T0})
	if err != nil || r.Start != "" || r.TimeZoneID != "Australia/Sydney" {
		t.Fatalf("recipient row with a zone only = %+v, %v", r, err)
	}
	unit, err = s.QuietHoursPut(ctx, store.QuietHoursRow{BusinessUnitID: "bu-1", Start: "22:00", End: "07:30", TimeZoneID: "Asia/Ho_Chi_Minh", ChangedBy: "tom", ChangedOn: T0.Add(time.Hour)})
	if err != nil || unit.Start != "22:00" || unit.End != "07:30" || unit.TimeZoneID != "Asia/Ho_Chi_Minh" || unit.Version != 2 || unit.ChangedBy != "tom" {
		t.Fatalf("replaced unit row = %+v, %v", unit, err)
	}
	if got, err := s.QuietHoursGet(ctx, "bu-1", ""); err != nil || got != unit {
		t.Fatalf("get = %+v, %v; want %+v", got, err, unit)
	}
	if _, err := s.QuietHoursPut(ctx, store.QuietHoursRow{BusinessUnitID: "bu-1", Start: "22:00", ChangedBy: "tom", ChangedOn: T0}); err == nil {
		t.Fatal("one end only was accepted")
	}
	if err := s.QuietHoursDelete(ctx, "bu-1", "+61412345678", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.QuietHoursDelete(ctx, "bu-1", "+61412345678", nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func testFinishSkippedWait(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	queueJobs(t, s, 1, req("dk-skip", "bu-1"), req("dk-wait", "bu-1"), req("dk-wait-many", "bu-1"))
	c := claimKey(t, s, "dk-skip", T0)
	if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: T0,
		Status: store.NotificationSkipped, Error: "opted out"}); err != nil {
		t.Fatal(err)
	}
	if again := claimKey(t, s, "dk-skip", T0.Add(time.Hour)); again.Claimed || again.Job.Status != store.NotificationSkipped ||
		again.Job.LastError != "opted out" || again.Job.SentOn != nil {
		t.Fatalf("a Skipped job = %+v; want it final, with its reason and no SentOn", again)
	}
	c = claimKey(t, s, "dk-wait", T0)
	until := T0.Add(8 * time.Hour)
	if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: T0,
		Status: store.NotificationSkipped, NextAttemptOn: &until}); err == nil {
		t.Fatal("Skipped with a next attempt was accepted")
	}
	if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: T0,
		Status: store.NotificationQueued, NextAttemptOn: &until, Wait: true, Error: "quiet hours"}); err != nil {
		t.Fatal(err)
	}
	if early := claimKey(t, s, "dk-wait", until.Add(-time.Minute)); early.Claimed {
		t.Fatal("claimed before the wait ended")
	}
	w := claimKey(t, s, "dk-wait", until)
	if !w.Claimed || w.Job.RetryCount != 0 || w.Job.AttemptCount != 1 {
		t.Fatalf("after the wait = %+v; want claimed with RetryCount 0 and AttemptCount 1 (a wait is not an attempt)", w)
	}
	// An in-doubt lookup put off (Unknown with Wait) moves neither count either; Wait without
	// a next attempt, or with Sent, is refused.
	for _, bad := range []store.NotificationFinishParams{{Status: store.NotificationUnknown, Wait: true}, {Status: store.NotificationSent, Wait: true}} {
		bad.ID, bad.Token, bad.Now = w.Job.ID, w.Job.Version, until
		if err := s.NotificationFinish(ctx, bad); err == nil {
			t.Fatalf("%s with Wait and no next attempt was accepted", bad.Status)
		}
	}
	later := until.Add(time.Minute)
	if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: w.Job.ID, Token: w.Job.Version, Now: until,
		Status: store.NotificationUnknown, NextAttemptOn: &later, Wait: true, Error: "busy"}); err != nil {
		t.Fatal(err)
	}
	if u := claimKey(t, s, "dk-wait", later); !u.Claimed || u.Job.RetryCount != 0 || u.Job.AttemptCount != 1 {
		t.Fatalf("after the put-off lookup = %+v; want claimed with RetryCount 0 and AttemptCount 1", u)
	}
	// The batch record (NotificationFinishMany) gives the claim back the same way, and a
	// real retry in the same batch counts.
	m := claimKey(t, s, "dk-wait-many", T0)
	if errs, err := s.NotificationFinishMany(ctx, []store.NotificationFinishParams{{ID: m.Job.ID, Token: m.Job.Version, Now: T0,
		Status: store.NotificationQueued, NextAttemptOn: &until, Wait: true, Error: "quiet hours"}}); err != nil || errs[0] != nil {
		t.Fatalf("finish many: %v %v", errs, err)
	}
	m = claimKey(t, s, "dk-wait-many", until)
	if !m.Claimed || m.Job.RetryCount != 0 || m.Job.AttemptCount != 1 {
		t.Fatalf("after a batch-recorded wait = %+v; want RetryCount 0 and AttemptCount 1", m)
	}
	if errs, err := s.NotificationFinishMany(ctx, []store.NotificationFinishParams{{ID: m.Job.ID, Token: m.Job.Version, Now: until,
		Status: store.NotificationQueued, NextAttemptOn: &later, Error: "connection reset"}}); err != nil || errs[0] != nil {
		t.Fatalf("finish many: %v %v", errs, err)
	}
	if r := claimKey(t, s, "dk-wait-many", later); !r.Claimed || r.Job.RetryCount != 1 || r.Job.AttemptCount != 2 {
		t.Fatalf("after a batch-recorded retry = %+v; want RetryCount 1 and AttemptCount 2", r)
	}
}
