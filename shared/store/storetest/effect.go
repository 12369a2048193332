package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// testEffectOnceAnyOrder: one effect (BusinessUnitId, EffectKey, "" meaning the DeliveryKey)
// has at most one job and one DeliveryKey at most one, whatever the order and batching of
// the completions that ask for them (docs/architecture.md#commands), and the jobs written
// are exactly those that one-by-one inserts in request order would write. The requests are
// drawn from a small key space so that every case collides many times: a job whose effect
// is its own key next to a job whose effect is that key (either order, either spelling of
// the own key), two jobs of one third effect, the same effect in another unit; in one
// statement, across the store's 100-row statements of one batch, across batches, and in
// single completions. Each request names a scheduler key: its own row's, another row's, or
// one with no row, and SupportNotificationList must list every job under its key.
//
// A DeliveryKey keeps one unit and one effect in every request for it (a redelivery), as
// the callers derive it from the scheduler key, channel and recipient.
func testEffectOnceAnyOrder(t *testing.T, open Opener) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { effectOnceAnyOrder(t, open, seed) })
	}
}

func effectOnceAnyOrder(t *testing.T, open Opener, seed uint64) {
	s := fresh(t, open)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 25))
	const nRows, nKeys, nHot = 120, 240, 40
	cands := make([]automation.Candidate, nRows)
	for i := range cands {
		cands[i] = Candidate(i, T0)
	}
	if _, err := s.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: T0, Candidates: cands}); err != nil {
		t.Fatal(err)
	}
	rows := claim(t, s, T0, nRows)
	if len(rows) != nRows {
		t.Fatalf("claimed %d rows, want %d", len(rows), nRows)
	}
	// Each DeliveryKey's fixed unit and effect: its own key (spelled "" or the key), or one
	// of the first nHot keys, which are also delivery keys: many effects collide while a
	// batch still holds well over 100 distinct rows.
	type ident struct{ bu, effect string }
	keyOf := func(i int) string { return fmt.Sprintf("dk-%02d", i) }
	idents := map[string]ident{}
	for i := 0; i < nKeys; i++ {
		id := ident{bu: []string{"bu-1", "bu-2"}[rng.IntN(2)]}
		if rng.IntN(2) == 0 {
			id.effect = keyOf(rng.IntN(nHot))
		}
		idents[keyOf(i)] = id
	}
	unknownKey := "reminder:no-row-" + fmt.Sprint(seed)
	seq := 0
	request := func(own automation.SchedulerRow) store.NotificationRequest {
		dk := keyOf(rng.IntN(nKeys))
		id := idents[dk]
		effect := id.effect
		if effect == "" && rng.IntN(2) == 0 {
			effect = dk
		}
		key := own.SchedulerKey
		switch rng.IntN(4) {
		case 0:
			key = rows[rng.IntN(nRows)].SchedulerKey
		case 1:
			key = unknownKey
		}
		seq++
		return store.NotificationRequest{DeliveryKey: dk, EffectKey: effect, SchedulerKey: key, BusinessUnitID: id.bu, Channel: "log",
			Recipient: fmt.Sprintf("r%d@example.test", seq), Template: "t", PayloadJSON: "{}"}
	}
	// The model: one-by-one inserts in request order.
	type job struct{ recipient, schedulerKey string }
	wantByKey, takenEffect := map[string]job{}, map[ident]bool{}
	apply := func(d store.NotificationRequest) {
		e := d.EffectKey
		if e == "" {
			e = d.DeliveryKey
		}
		if _, ok := wantByKey[d.DeliveryKey]; ok || takenEffect[ident{d.BusinessUnitID, e}] {
			return
		}
		wantByKey[d.DeliveryKey], takenEffect[ident{d.BusinessUnitID, e}] = job{d.Recipient, d.SchedulerKey}, true
	}
	next, widest := 0, 0
	for next < nRows {
		var items []store.SchedulerCompleteParams
		switch kind := rng.IntN(3); {
		case kind == 0 && next > 0: // a single completion with one delivery
			items = []store.SchedulerCompleteParams{{ID: rows[next].ID, Token: rows[next].Version, Now: T0,
				Deliveries: []store.NotificationRequest{request(rows[next])}}}
			next++
		default: // a batch of up to 12 items with up to 40 deliveries each: often past 100 rows
			n, per := min(1+rng.IntN(12), nRows-next), rng.IntN(41)
			if next == 0 { // the first batch is the widest
				n, per = 12, 40
			}
			for _, r := range rows[next : next+n] {
				p := store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: T0}
				for k := per; k > 0; k-- {
					p.Deliveries = append(p.Deliveries, request(r))
				}
				items = append(items, p)
			}
			next += n
		}
		// The rows the batch's statements carry: its requests less repeats of a delivery
		// key or effect within the batch.
		sent, seenKey, seenEffect := 0, map[string]bool{}, map[ident]bool{}
		for _, p := range items {
			for _, d := range p.Deliveries {
				apply(d)
				e := d.EffectKey
				if e == "" {
					e = d.DeliveryKey
				}
				if !seenKey[d.DeliveryKey] && !seenEffect[ident{d.BusinessUnitID, e}] {
					sent++
				}
				seenKey[d.DeliveryKey], seenEffect[ident{d.BusinessUnitID, e}] = true, true
			}
		}
		widest = max(widest, sent)
		errs, err := s.SchedulerCompleteBatch(ctx, items)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range errs {
			if e != nil {
				t.Fatalf("item %d: %v", i, e)
			}
		}
	}
	if widest <= 100 {
		t.Fatalf("no batch wrote more than 100 jobs (at most %d): the store's 100-row statements were not crossed", widest)
	}
	gotByEffect := map[ident]string{}
	listed := map[string][]string{}
	for i := 0; i < nKeys; i++ {
		dk := keyOf(i)
		j, err := s.NotificationGetByKey(ctx, dk)
		want, ok := wantByKey[dk]
		if errors.Is(err, store.ErrNotFound) {
			if ok {
				t.Errorf("job %s missing, want the one for %s", dk, want.recipient)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		e := j.EffectKey
		if e == "" {
			e = j.DeliveryKey
		}
		if other, dup := gotByEffect[ident{j.BusinessUnitID, e}]; dup {
			t.Errorf("effect (%s, %s) has two jobs: %s and %s", j.BusinessUnitID, e, other, dk)
		}
		gotByEffect[ident{j.BusinessUnitID, e}] = dk
		if !ok || j.Recipient != want.recipient {
			t.Errorf("job %s written for %s (effect %s, %s), want %+v (written: %v)", dk, j.Recipient, e, j.BusinessUnitID, want, ok)
		}
		if ok {
			listed[want.schedulerKey] = append(listed[want.schedulerKey], dk)
		}
	}
	keys := []string{unknownKey}
	for _, r := range rows {
		keys = append(keys, r.SchedulerKey)
	}
	for _, key := range keys {
		got := deliveryKeysOf(t, s, key, 1000)
		want := listed[key]
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("jobs of %s: %q, want %q", key, got, want)
		}
	}
}

// testSupportNotificationsAcrossLinks: SupportNotificationList returns a key's jobs in Id
// order and at most limit of them, when some were written before the key's scheduler row
// existed (unlinked) and some after (linked to it): the order and the limit hold across
// both kinds, and another key's jobs never appear.
func testSupportNotificationsAcrossLinks(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	later, other := Candidate(90, T0.Add(time.Hour)), Candidate(91, T0.Add(time.Hour))
	for i := 0; i < 3; i++ {
		ensure1(t, s, T0, Candidate(i, T0))
	}
	rows := claim(t, s, T0, 3)
	if len(rows) != 3 {
		t.Fatalf("claimed %d rows, want 3", len(rows))
	}
	complete := func(r automation.SchedulerRow, reqs ...[2]string) {
		t.Helper()
		p := store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: T0}
		for _, q := range reqs {
			p.Deliveries = append(p.Deliveries, store.NotificationRequest{DeliveryKey: q[0], SchedulerKey: q[1], BusinessUnitID: "bu-1", Channel: "log",
				Recipient: q[0] + "@example.test", Template: "t", PayloadJSON: "{}"})
		}
		if err := s.SchedulerComplete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	// Unlinked: written before later's row exists; other's job in between.
	complete(rows[0], [2]string{"dk-u1", later.SchedulerKey}, [2]string{"dk-o1", other.SchedulerKey}, [2]string{"dk-u2", later.SchedulerKey})
	ensure1(t, s, T0, later)
	// Linked: written after; the completing row is not later's.
	complete(rows[1], [2]string{"dk-l1", later.SchedulerKey}, [2]string{"dk-o2", other.SchedulerKey})
	complete(rows[2], [2]string{"dk-l2", later.SchedulerKey})
	all := []string{"dk-u1", "dk-u2", "dk-l1", "dk-l2"}
	for limit := 1; limit <= 5; limit++ {
		jobs, err := s.SupportNotificationList(ctx, later.SchedulerKey, limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var last int64
		for _, j := range jobs {
			got = append(got, j.DeliveryKey)
			if j.ID <= last {
				t.Errorf("limit %d: Ids not ascending: %+v", limit, jobs)
			}
			last = j.ID
		}
		if want := all[:min(limit, len(all))]; !slices.Equal(got, want) {
			t.Errorf("limit %d: %q, want %q", limit, got, want)
		}
	}
}
