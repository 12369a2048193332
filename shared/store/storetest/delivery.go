package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// runDelivery is the delivery part of the suite (issue 5): commands, facts, the send-claim
// rule with backoff/hold/Unknown, resolution, templates and the fact projection.
func runDelivery(t *testing.T, open Opener) {
	runCases(t, open, deliveryCases)
}

// testBatchFactsEnvelope: the facts one batch claim or one batch record writes are one
// outbox row, an envelope (store.NewEnvelope), holding them in the batch's order, each
// with its own MessageId and session; a batch that writes one fact writes it as a row of
// its own. docs/performance.md, "Facts in envelopes".
func testBatchFactsEnvelope(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	queueJobs(t, s, 1, req("dk-1", "bu-1"), req("dk-2", "bu-1"), req("dk-3", "bu-1"), req("dk-4", "bu-1"))
	rows := func() []store.OutboxMessage {
		t.Helper()
		msgs, err := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: store.MaxBatch})
		if err != nil {
			t.Fatal(err)
		}
		var out []store.OutboxMessage
		for _, m := range msgs {
			if m.Destination == topology.DeliveryFactsTopic {
				out = append(out, m)
			}
		}
		return out
	}
	res, err := s.NotificationClaimMany(ctx, store.NotificationClaimManyParams{DeliveryKeys: []string{"dk-3", "dk-1", "dk-2"}, Now: T0, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	claim := rows()
	if len(claim) != 1 || !claim[0].Envelope || claim[0].SessionID != "" {
		t.Fatalf("the claim of 3 wrote %d fact rows: %+v", len(claim), claim)
	}
	items, err := claim[0].Items()
	if err != nil || len(items) != 3 {
		t.Fatalf("envelope items %+v %v", items, err)
	}
	for i, key := range []string{"dk-3", "dk-1", "dk-2"} {
		var f store.DeliveryFact
		if err := json.Unmarshal(items[i].Body, &f); err != nil || items[i].MessageID != store.FactEventID(key, 2) ||
			items[i].SessionID != key || f.EventID != items[i].MessageID || f.Status != store.NotificationSending || items[i].ID != claim[0].ID {
			t.Fatalf("item %d: %+v (%v)", i, items[i], err)
		}
	}
	now := T0.Add(time.Second)
	errs, err := s.NotificationFinishMany(ctx, []store.NotificationFinishParams{
		{ID: res[0].Job.ID, Token: res[0].Job.Version, Now: now, Status: store.NotificationSent},
		{ID: res[1].Job.ID, Token: res[1].Job.Version, Now: now, Status: store.NotificationFailed},
		{ID: res[2].Job.ID, Token: res[2].Job.Version - 1, Now: now, Status: store.NotificationSent}, // stale: no fact
	})
	if err != nil || errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], store.ErrLeaseLost) {
		t.Fatalf("finish many: %v %v", errs, err)
	}
	finish := rows()[1:]
	if len(finish) != 1 || !finish[0].Envelope {
		t.Fatalf("the record of 2 wrote %d fact rows: %+v", len(finish), finish)
	}
	if items, err = finish[0].Items(); err != nil || len(items) != 2 || items[0].MessageID != store.FactEventID("dk-3", 3) || items[1].MessageID != store.FactEventID("dk-1", 3) {
		t.Fatalf("record envelope items %+v %v", items, err)
	}
	// One claim, one fact: a plain row.
	if _, err := s.NotificationClaimMany(ctx, store.NotificationClaimManyParams{DeliveryKeys: []string{"dk-4"}, Now: now, Lease: time.Minute}); err != nil {
		t.Fatal(err)
	}
	single := rows()[2:]
	if len(single) != 1 || single[0].Envelope || single[0].MessageID != store.FactEventID("dk-4", 2) || single[0].SessionID != "dk-4" {
		t.Fatalf("one fact: %+v", single)
	}
	// A claim of 150 keys: envelopes of at most 100 facts (a bounded row), 100 then 50.
	var many []store.NotificationRequest
	var keys []string
	for i := range 150 {
		keys = append(keys, fmt.Sprintf("big-%03d", i))
		many = append(many, req(keys[i], "bu-1"))
	}
	queueJobs(t, s, 2, many...)
	if _, err := s.NotificationClaimMany(ctx, store.NotificationClaimManyParams{DeliveryKeys: keys, Now: now, Lease: time.Minute}); err != nil {
		t.Fatal(err)
	}
	big := rows()[3:]
	var sizes []int
	for _, m := range big {
		items, err := m.Items()
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(items))
	}
	if fmt.Sprint(sizes) != "[100 50]" {
		t.Fatalf("a claim of 150 wrote envelopes of %v facts, want [100 50]", sizes)
	}
}

// testClaimManyWholeJob: each claim NotificationClaimMany returns is the whole job as then
// stored, field by field (jobDiff), for jobs whose other columns differ from one another and
// from a fresh job (a retry with its error, retry count, retry time and template version; a
// lookup in doubt; an expired claim taken over; a fresh job), so a store that leaves out a
// column the claim set, or mixes two jobs up, fails. The batch claim's instant is not a
// whole millisecond: the result holds the instants as stored, as NotificationClaim's does.
// Each fact written by the claim and by the NotificationFinishMany that follows is the fact
// of the job as then stored (wantFact): its keys, channel, day, status, revision, provider
// reference and instant.
func testClaimManyWholeJob(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	mk := func(key, bu, ch, day, payload string) store.NotificationRequest {
		r := req(key, bu)
		r.EffectKey, r.Channel, r.LocalDate, r.PayloadJSON, r.Recipient = "eff-"+key, ch, day, payload, key+"@example.test"
		return r
	}
	queueJobs(t, s, 1, mk("wj-retry", "bu-1", "log", "2026-10-01", `{"n":1}`), mk("wj-lookup", "bu-2", "email", "2026-10-02", `{"n":2}`),
		mk("wj-expired", "bu-3", "sms", "2026-10-03", `{"n":3}`), mk("wj-fresh", "bu-1", "log", "2026-10-04", `{"n":4}`))
	finish := func(key string, p store.NotificationFinishParams) {
		t.Helper()
		c := claimKey(t, s, key, T0)
		p.ID, p.Token, p.Now = c.Job.ID, c.Job.Version, T0
		if err := s.NotificationFinish(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	finish("wj-retry", store.NotificationFinishParams{Status: store.NotificationQueued, Error: "451 try later", TemplateVersion: 7, NextAttemptOn: ptr(T0.Add(time.Minute))})
	finish("wj-lookup", store.NotificationFinishParams{Status: store.NotificationUnknown, Error: "timeout", NextAttemptOn: ptr(T0.Add(time.Minute))})
	claimKey(t, s, "wj-expired", T0) // its one-minute lease runs out before the batch
	keys := []string{"wj-fresh", "wj-expired", "wj-lookup", "wj-retry"}
	factsBefore := facts(t, s)
	at := T0.Add(2*time.Minute + 123456789*time.Nanosecond)
	res, err := s.NotificationClaimMany(ctx, store.NotificationClaimManyParams{DeliveryKeys: keys, Now: at, Lease: 45 * time.Second})
	if err != nil || len(res) != len(keys) {
		t.Fatalf("claim many: %+v %v", res, err)
	}
	stored := jobsByKey(t, s, keys)
	for i, k := range keys {
		got := stored[k]
		if !res[i].Claimed || res[i].Job.Status != store.NotificationSending {
			t.Fatalf("%s not claimed: %+v", k, res[i])
		}
		if d := jobDiff(res[i].Job, got); len(d) > 0 {
			t.Errorf("%s: the claim returned differs from the job stored in %v\nreturned %+v\nstored   %+v", k, d, res[i].Job, got)
		}
	}
	var want []store.DeliveryFact
	for _, k := range keys {
		if k != "wj-expired" { // an expired claim taken over keeps its Revision: no fact
			want = append(want, wantFact(stored[k]))
		}
	}
	checkFacts(t, "claim", newFacts(t, s, factsBefore), want)

	factsBefore = facts(t, s)
	now := at.Add(10*time.Second + 987654*time.Nanosecond)
	// Items 0 and 2 carry their claimed job (the fact's identity columns come from it), 1
	// and 3 do not (the store reads them): every fact must be the job's as stored.
	ps := []store.NotificationFinishParams{
		{ID: res[0].Job.ID, Token: res[0].Job.Version, Now: now, Status: store.NotificationSent, ProviderReference: "ref-fresh", TemplateVersion: 3, Job: &res[0].Job},
		{ID: res[1].Job.ID, Token: res[1].Job.Version, Now: now, Status: store.NotificationFailed, Error: "rejected"},
		{ID: res[2].Job.ID, Token: res[2].Job.Version, Now: now, Status: store.NotificationUnknown, ProviderReference: "ref-lookup", Job: &res[2].Job},
		{ID: res[3].Job.ID, Token: res[3].Job.Version, Now: now, Status: store.NotificationSent, ProviderReference: "ref-retry"},
	}
	errs, err := s.NotificationFinishMany(ctx, ps)
	if err != nil || len(errs) != len(ps) {
		t.Fatalf("finish many: %v %v", errs, err)
	}
	want = want[:0]
	for i, k := range keys {
		if errs[i] != nil {
			t.Fatalf("%s: %v", k, errs[i])
		}
		got, _ := s.NotificationGetByKey(ctx, k)
		if got.Status != ps[i].Status || got.ProviderReference != ps[i].ProviderReference || got.Revision != stored[k].Revision+1 {
			t.Errorf("%s recorded %+v from %+v", k, got, ps[i])
		}
		want = append(want, wantFact(got))
	}
	checkFacts(t, "outcome", newFacts(t, s, factsBefore), want)

	// An item whose claimed job is another job's is refused; nothing is written for it.
	queueJobs(t, s, 2, mk("wj-late", "bu-2", "log", "2026-10-05", `{"n":5}`))
	c := claimKey(t, s, "wj-late", at.Add(time.Hour))
	if !c.Claimed {
		t.Fatalf("wj-late not claimed: %+v", c)
	}
	other := stored["wj-fresh"]
	factsBefore = facts(t, s)
	errs, err = s.NotificationFinishMany(ctx, []store.NotificationFinishParams{
		{ID: c.Job.ID, Token: c.Job.Version, Now: at.Add(time.Hour), Status: store.NotificationSent, Job: &other},
		{ID: c.Job.ID, Token: c.Job.Version, Now: at.Add(time.Hour), Status: store.NotificationSent, Job: &store.NotificationJob{ID: c.Job.ID}},
	})
	if err != nil || len(errs) != 2 || errs[0] == nil || errs[1] == nil || errors.Is(errs[0], store.ErrLeaseLost) {
		t.Fatalf("items with a wrong claimed job: %v %v", errs, err)
	}
	if got, _ := s.NotificationGetByKey(ctx, "wj-late"); got.Status != store.NotificationSending || got.Version != c.Job.Version {
		t.Fatalf("a refused item changed its job: %+v", got)
	}
	if f := newFacts(t, s, factsBefore); len(f) != 0 {
		t.Fatalf("a refused item wrote facts: %+v", f)
	}
}

// wantFact is the delivery fact of j's current status, from the job as stored: its instant
// is j's UpdatedOn (the Now of the change that wrote it).
func wantFact(j store.NotificationJob) store.DeliveryFact {
	return store.DeliveryFact{EventID: store.FactEventID(j.DeliveryKey, j.Revision), CommandID: j.DeliveryKey, EffectKey: j.EffectKey,
		BusinessUnitID: j.BusinessUnitID, SchedulerKey: j.SchedulerKey, Channel: j.Channel, LocalDate: j.LocalDate,
		Status: j.Status, Revision: j.Revision, OccurredOn: j.UpdatedOn, ProviderReference: j.ProviderReference, ResolvedBy: j.ResolvedBy}
}

// checkFacts fails unless got and want hold the same facts in the same order, field by
// field (instants compared with Equal).
func checkFacts(t *testing.T, what string, got, want []store.DeliveryFact) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s facts: got %d %+v, want %d %+v", what, len(got), got, len(want), want)
	}
	for i := range want {
		g, w := got[i], want[i]
		same := g.OccurredOn.Equal(w.OccurredOn)
		g.OccurredOn, w.OccurredOn = time.Time{}, time.Time{}
		if !same || g != w {
			t.Errorf("%s fact %d:\n got %+v (at %s)\nwant %+v (at %s)", what, i, g, got[i].OccurredOn, w, want[i].OccurredOn)
		}
	}
}

// jobDiff names the fields in which a and b differ, every field of store.NotificationJob
// compared (instants with Equal, so a field added later is compared too).
func jobDiff(a, b store.NotificationJob) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for i := 0; i < va.NumField(); i++ {
		fa, fb := va.Field(i).Interface(), vb.Field(i).Interface()
		same := reflect.DeepEqual(fa, fb)
		switch x := fa.(type) {
		case time.Time:
			same = x.Equal(fb.(time.Time))
		case *time.Time:
			y := fb.(*time.Time)
			same = (x == nil) == (y == nil) && (x == nil || x.Equal(*y))
		}
		if !same {
			out = append(out, va.Type().Field(i).Name)
		}
	}
	return out
}

// testClaimFinishMany: the batch send claim decides each key as NotificationClaim does (a
// missing key, a repeated key, a live claim), and the batch record fences each item as
// NotificationFinish does, writing one fact per change and nothing for a stale item.
func testClaimFinishMany(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	queueJobs(t, s, 1, req("dk-1", "bu-1"), req("dk-2", "bu-1"), req("dk-3", "bu-1"))
	if _, err := s.NotificationClaimMany(ctx, store.NotificationClaimManyParams{Now: T0, Lease: time.Minute}); err == nil {
		t.Fatal("an empty batch was accepted")
	}
	live := claimKey(t, s, "dk-3", T0) // another sender's live claim
	res, err := s.NotificationClaimMany(ctx, store.NotificationClaimManyParams{DeliveryKeys: []string{"dk-1", "nope", "dk-1", "dk-2", "dk-3"}, Now: T0, Lease: time.Minute})
	if err != nil || len(res) != 5 {
		t.Fatalf("claim many: %+v %v", res, err)
	}
	if !res[0].Claimed || res[0].InDoubt || res[0].Job.DeliveryKey != "dk-1" || res[0].Job.Status != store.NotificationSending || res[0].Job.AttemptCount != 1 {
		t.Fatalf("dk-1: %+v", res[0])
	}
	if res[1].Claimed || res[1].Job.ID != 0 {
		t.Fatalf("a missing key: %+v", res[1])
	}
	if res[2].Claimed || res[2].Job.ID != res[0].Job.ID || res[2].Job.Version != res[0].Job.Version {
		t.Fatalf("a repeated key must find its own live claim: %+v", res[2])
	}
	if !res[3].Claimed || res[4].Claimed || res[4].Job.Version != live.Job.Version {
		t.Fatalf("dk-2 %+v, dk-3 (live elsewhere) %+v", res[3], res[4])
	}
	var claimFacts []string
	for _, f := range facts(t, s) {
		if f.Status == store.NotificationSending {
			claimFacts = append(claimFacts, f.EventID)
		}
	}
	if len(claimFacts) != 3 { // dk-3 by claimKey, dk-1 and dk-2 by the batch: one each
		t.Fatalf("claim facts %v", claimFacts)
	}
	now := T0.Add(10 * time.Second)
	errs, err := s.NotificationFinishMany(ctx, []store.NotificationFinishParams{
		{ID: res[0].Job.ID, Token: res[0].Job.Version, Now: now, Status: store.NotificationSent, ProviderReference: "ref-1"},
		{ID: res[3].Job.ID, Token: res[3].Job.Version - 1, Now: now, Status: store.NotificationSent}, // stale token
		{ID: live.Job.ID, Token: live.Job.Version, Now: now, Status: store.NotificationQueued},       // a retry without NextAttemptOn
	})
	if err != nil || len(errs) != 3 || errs[0] != nil || !errors.Is(errs[1], store.ErrLeaseLost) || errs[2] == nil || errors.Is(errs[2], store.ErrLeaseLost) {
		t.Fatalf("finish many: %v %v", errs, err)
	}
	j1, _ := s.NotificationGetByKey(ctx, "dk-1")
	j2, _ := s.NotificationGetByKey(ctx, "dk-2")
	j3, _ := s.NotificationGetByKey(ctx, "dk-3")
	if j1.Status != store.NotificationSent || j1.ProviderReference != "ref-1" || j1.SentOn == nil || j1.Revision != 3 {
		t.Fatalf("dk-1 recorded: %+v", j1)
	}
	if j2.Status != store.NotificationSending || j2.Version != res[3].Job.Version || j3.Status != store.NotificationSending || j3.Version != live.Job.Version {
		t.Fatalf("a stale or invalid item changed its job: %+v %+v", j2, j3)
	}
	var sent []string
	for _, f := range facts(t, s) {
		if f.Status == store.NotificationSent {
			sent = append(sent, f.EventID)
		}
	}
	if len(sent) != 1 || sent[0] != store.FactEventID("dk-1", 3) {
		t.Fatalf("sent facts %v", sent)
	}
	if errs, err := s.NotificationFinishMany(ctx, nil); err != nil || len(errs) != 0 {
		t.Fatalf("an empty record: %v %v", errs, err)
	}
	// A group commit's items are taken once, inside the transaction; none taken writes
	// nothing, and the items taken come back with their errors.
	calls := 0
	ps, errs, err := s.NotificationFinishGroup(ctx, func() []store.NotificationFinishParams { calls++; return nil })
	if err != nil || ps != nil || errs != nil || calls != 1 {
		t.Fatalf("an empty group: %v %v %v, take called %d times", ps, errs, err, calls)
	}
	group := []store.NotificationFinishParams{
		{ID: res[3].Job.ID, Token: res[3].Job.Version, Now: now, Status: store.NotificationFailed},
		{ID: res[0].Job.ID, Token: res[0].Job.Version, Now: now, Status: store.NotificationSent}, // recorded above: stale
	}
	calls = 0
	ps, errs, err = s.NotificationFinishGroup(ctx, func() []store.NotificationFinishParams { calls++; return group })
	if err != nil || calls != 1 || len(ps) != 2 || ps[0].ID != group[0].ID || len(errs) != 2 || errs[0] != nil || !errors.Is(errs[1], store.ErrLeaseLost) {
		t.Fatalf("a group: %v %v %v, take called %d times", ps, errs, err, calls)
	}
	if j2, _ := s.NotificationGetByKey(ctx, "dk-2"); j2.Status != store.NotificationFailed {
		t.Fatalf("dk-2 after the group: %+v", j2)
	}
	if ps, _, err := s.NotificationFinishGroup(ctx, func() []store.NotificationFinishParams {
		return make([]store.NotificationFinishParams, store.MaxBatch+1)
	}); err == nil || len(ps) != store.MaxBatch+1 {
		t.Fatalf("a group over the bound: %d taken, %v", len(ps), err)
	}
}

// mixedKinds are the states testClaimManyMixed prepares, one per key in turn (key i has
// kind i % len(mixedKinds)): claimable kinds are queued, expired (a Sending claim whose lease
// ran out, in doubt) and lookup (Unknown due for a lookup, in doubt).
var mixedKinds = []string{"queued", "sent", "live", "expired", "lookup", "manual", "held", "later", "queued", "queued"}

// mixedBatch queues n jobs (mk-000, …) and brings key i to the state mixedKinds names for it,
// before the batch claim at T0+2min (claims at T0 hold a one-minute lease).
func mixedBatch(t *testing.T, s store.Store, n int) (keys []string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	at = T0.Add(2 * time.Minute)
	var reqs []store.NotificationRequest
	for i := 0; i < n; i++ {
		keys = append(keys, fmt.Sprintf("mk-%03d", i))
		reqs = append(reqs, req(keys[i], "bu-1"))
	}
	queueJobs(t, s, 1, reqs...)
	finish := func(c store.NotificationClaimResult, p store.NotificationFinishParams) {
		t.Helper()
		p.ID, p.Token, p.Now = c.Job.ID, c.Job.Version, T0
		if err := s.NotificationFinish(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for i, k := range keys {
		switch mixedKinds[i%len(mixedKinds)] {
		case "sent":
			finish(claimKey(t, s, k, T0), store.NotificationFinishParams{Status: store.NotificationSent})
		case "live": // another sender claimed it just before the batch: the Version moved
			claimKey(t, s, k, at.Add(-time.Second))
		case "expired":
			claimKey(t, s, k, T0)
		case "lookup":
			finish(claimKey(t, s, k, T0), store.NotificationFinishParams{Status: store.NotificationUnknown, NextAttemptOn: ptr(T0.Add(time.Minute))})
		case "manual":
			finish(claimKey(t, s, k, T0), store.NotificationFinishParams{Status: store.NotificationUnknown})
		case "held":
			finish(claimKey(t, s, k, T0), store.NotificationFinishParams{Status: store.NotificationFailed, Hold: true})
		case "later":
			finish(claimKey(t, s, k, T0), store.NotificationFinishParams{Status: store.NotificationQueued, NextAttemptOn: ptr(at.Add(time.Hour))})
		}
	}
	return keys, at
}

// newFacts returns the delivery facts in the outbox that before does not hold, in the
// outbox's order.
func newFacts(t *testing.T, s store.Store, before []store.DeliveryFact) []store.DeliveryFact {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range before {
		seen[f.EventID] = true
	}
	var out []store.DeliveryFact
	for _, f := range facts(t, s) {
		if !seen[f.EventID] {
			out = append(out, f)
		}
	}
	return out
}

// testClaimManyMixed: one batch claim of 230 jobs in every state, with keys repeated and keys
// without a job (so more than one statement of reads and of guarded updates, the last one
// short), decides each key as NotificationClaim does: the queued ones and those in doubt
// (an expired claim, an Unknown job due for a lookup) are claimed, Sent, a claim another
// sender took just before (its Version moved), manual resolution, a hold and a retry not
// yet due are not, and each shows the job as it is. A repeated key finds its first
// occurrence's claim; the rows stored are the claims returned, and each claim that changed
// the status wrote one fact, in the batch's order (an expired claim taken over writes none).
func testClaimManyMixed(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	keys, at := mixedBatch(t, s, 230)
	before := jobsByKey(t, s, keys)
	factsBefore := facts(t, s)
	batch := append([]string{"mk-000", "nope-1"}, keys...)
	batch = append(batch, "mk-000", "mk-001", "mk-003", "mk-002", "nope-1", "nope-2", "mk-229")
	lease := 90 * time.Second
	res, err := s.NotificationClaimMany(ctx, store.NotificationClaimManyParams{DeliveryKeys: batch, Now: at, Lease: lease})
	if err != nil || len(res) != len(batch) {
		t.Fatalf("claim many: %d results, %v", len(res), err)
	}
	first := map[string]int{}
	var wantFacts []string
	claimed := 0
	for i, k := range batch {
		r := res[i]
		if f, ok := first[k]; ok {
			if r.Claimed || r.InDoubt || r.Job.ID != res[f].Job.ID || r.Job.Version != res[f].Job.Version || r.Job.Status != res[f].Job.Status {
				t.Errorf("%s repeated at %d: %+v, first %+v", k, i, r, res[f])
			}
			continue
		}
		first[k] = i
		b, ok := before[k]
		if !ok {
			if r.Claimed || r.Job.ID != 0 {
				t.Errorf("%s (no job): %+v", k, r)
			}
			continue
		}
		var n int
		fmt.Sscanf(k, "mk-%d", &n)
		kind := mixedKinds[n%len(mixedKinds)]
		switch kind {
		case "queued", "expired", "lookup":
			claimed++
			rev := b.Revision + 1
			if kind == "expired" {
				rev = b.Revision
			} else {
				wantFacts = append(wantFacts, store.FactEventID(k, rev))
			}
			j := r.Job
			if !r.Claimed || r.InDoubt != (kind != "queued") || j.ID != b.ID || j.Status != store.NotificationSending || j.Version != b.Version+1 ||
				j.Revision != rev || j.AttemptCount != b.AttemptCount+1 || j.ProcessingLeaseExpiresOn == nil ||
				!j.ProcessingLeaseExpiresOn.Equal(at.Add(lease)) || !j.UpdatedOn.Equal(at) {
				t.Errorf("%s (%s) claim: %+v", k, kind, r)
			}
		default:
			if r.Claimed || r.InDoubt || r.Job.ID != b.ID || r.Job.Version != b.Version || r.Job.Status != b.Status {
				t.Errorf("%s (%s) must not be claimed: %+v, was %+v", k, kind, r, b)
			}
		}
		if got, _ := s.NotificationGetByKey(ctx, k); len(jobDiff(got, r.Job)) > 0 {
			t.Errorf("%s stored %+v, result %+v (differ in %v)", k, got, r.Job, jobDiff(got, r.Job))
		}
	}
	if claimed != 115 {
		t.Fatalf("%d claims, want 115 (more than one statement of 100)", claimed)
	}
	var got []string
	for _, f := range newFacts(t, s, factsBefore) {
		if f.Status != store.NotificationSending {
			t.Errorf("claim fact %+v", f)
		}
		got = append(got, f.EventID)
	}
	if strings.Join(got, " ") != strings.Join(wantFacts, " ") {
		t.Fatalf("claim facts\n got %v\nwant %v", got, wantFacts)
	}
}

// testFinishManyMixed: one batch record of more than 100 outcomes (so more than one
// statement, the last one short) fences each item as NotificationFinish does and keeps each
// item's own values (status, reference, error, retry time, hold, template version, Now). A
// stale token, an item repeated with the same token, an item for a job no longer Sending and
// an invalid item write nothing; for one job sent twice with a stale then its current token,
// the second records. Facts come in the items' order, one per item recorded.
func testFinishManyMixed(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	keys, at := mixedBatch(t, s, 230)
	res, err := s.NotificationClaimMany(ctx, store.NotificationClaimManyParams{DeliveryKeys: keys, Now: at, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	factsBefore := facts(t, s)
	now1, now2 := at.Add(10*time.Second), at.Add(20*time.Second)
	var ps []store.NotificationFinishParams
	var claims []store.NotificationClaimResult
	for _, r := range res {
		if r.Claimed {
			claims = append(claims, r)
		}
	}
	for i, c := range claims {
		p := store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: now1}
		switch i % 5 {
		case 0:
			p.Status, p.ProviderReference, p.TemplateVersion = store.NotificationSent, "ref-"+c.Job.DeliveryKey, 7
		case 1:
			p.Status, p.Error, p.Hold, p.Now = store.NotificationFailed, "gave up", true, now2
		case 2:
			p.Status, p.Error, p.NextAttemptOn = store.NotificationQueued, "451", ptr(at.Add(time.Hour))
		case 3:
			p.Status, p.NextAttemptOn, p.Now = store.NotificationUnknown, ptr(at.Add(2*time.Hour)), now2
		case 4:
			p.Status = store.NotificationUnknown
		}
		ps = append(ps, p)
	}
	sent := func(c store.NotificationClaimResult, token int64) store.NotificationFinishParams {
		return store.NotificationFinishParams{ID: c.Job.ID, Token: token, Now: now2, Status: store.NotificationSent, ProviderReference: "late"}
	}
	// Besides each claim's own item: claims[1] again with a stale token (after its own item);
	// claims[2] with a stale token, then its own item; a job already Sent at its current
	// Version (not Sending); an invalid item; the live claim of mk-002 (another sender's) with
	// its own token, which records; at the end claims[0]'s item again (the same token, after
	// it recorded).
	sentJob, _ := s.NotificationGetByKey(ctx, "mk-001")
	live, _ := s.NotificationGetByKey(ctx, "mk-002")
	ps = append([]store.NotificationFinishParams{
		ps[0],
		ps[1],
		sent(claims[1], claims[1].Job.Version-1),
		sent(claims[2], claims[2].Job.Version-1),
		ps[2], // index 4: recorded
		{ID: sentJob.ID, Token: sentJob.Version, Now: now2, Status: store.NotificationSent},
		{ID: claims[3].Job.ID, Token: claims[3].Job.Version, Now: now2, Status: store.NotificationQueued}, // a retry without a time
		{ID: live.ID, Token: live.Version, Now: now2, Status: store.NotificationSent, ProviderReference: "other"},
	}, append(ps[3:], ps[0])...)
	if len(ps) <= 100 {
		t.Fatalf("%d items, want more than 100", len(ps))
	}
	before := map[int64]store.NotificationJob{}
	for _, k := range keys {
		j, _ := s.NotificationGetByKey(ctx, k)
		before[j.ID] = j
	}
	errs, err := s.NotificationFinishMany(ctx, ps)
	if err != nil || len(errs) != len(ps) {
		t.Fatalf("finish many: %d item errors, %v", len(errs), err)
	}
	recorded := map[int64]int{} // job -> its recorded item
	var wantFacts []string
	for i, p := range ps {
		b := before[p.ID]
		wantLost := p.Token != b.Version || b.Status != store.NotificationSending || recorded[p.ID] != 0
		invalid := p.Status == store.NotificationQueued && p.NextAttemptOn == nil
		switch {
		case invalid:
			if errs[i] == nil || errors.Is(errs[i], store.ErrLeaseLost) {
				t.Errorf("item %d (invalid): %v", i, errs[i])
			}
			continue
		case wantLost:
			if !errors.Is(errs[i], store.ErrLeaseLost) {
				t.Errorf("item %d (%s token %d, job at %d %s): %v, want ErrLeaseLost", i, b.DeliveryKey, p.Token, b.Version, b.Status, errs[i])
			}
			continue
		case errs[i] != nil:
			t.Errorf("item %d (%s): %v", i, b.DeliveryKey, errs[i])
			continue
		}
		recorded[p.ID] = i + 1
		wantFacts = append(wantFacts, store.FactEventID(b.DeliveryKey, b.Revision+1))
	}
	for id, b := range before {
		j, _ := s.NotificationGetByKey(ctx, b.DeliveryKey)
		n := recorded[id]
		if n == 0 {
			if j.Version != b.Version || j.Status != b.Status || j.Revision != b.Revision {
				t.Errorf("%s changed without a recorded item: %+v, was %+v", b.DeliveryKey, j, b)
			}
			continue
		}
		p := ps[n-1]
		retry := 0
		if p.NextAttemptOn != nil {
			retry = 1
		}
		tv := b.TemplateVersion
		if p.TemplateVersion > 0 {
			tv = p.TemplateVersion
		}
		ok := j.Status == p.Status && j.ProviderReference == p.ProviderReference && j.LastError == p.Error &&
			j.IsOnSupportHold == p.Hold && j.RetryCount == b.RetryCount+retry && j.TemplateVersion == tv &&
			j.Version == b.Version+1 && j.Revision == b.Revision+1 && j.ProcessingLeaseExpiresOn == nil && j.UpdatedOn.Equal(p.Now) &&
			(p.NextAttemptOn == nil) == (j.NextAttemptOn == nil) && (p.NextAttemptOn == nil || j.NextAttemptOn.Equal(*p.NextAttemptOn)) &&
			(p.Status == store.NotificationSent) == (j.SentOn != nil) && (j.SentOn == nil || j.SentOn.Equal(p.Now))
		if !ok {
			t.Errorf("%s recorded %+v from item %+v", b.DeliveryKey, j, p)
		}
	}
	if recorded[claims[2].Job.ID] != 5 || recorded[live.ID] == 0 || recorded[sentJob.ID] != 0 || recorded[claims[1].Job.ID] == 0 {
		t.Fatalf("recorded items %v", recorded)
	}
	var got []string
	for _, f := range newFacts(t, s, factsBefore) {
		got = append(got, f.EventID)
	}
	if strings.Join(got, " ") != strings.Join(wantFacts, " ") {
		t.Fatalf("outcome facts\n got %v\nwant %v", got, wantFacts)
	}
}

// queueJobs completes one row with the given delivery requests.
func queueJobs(t *testing.T, s store.Store, n int, reqs ...store.NotificationRequest) {
	t.Helper()
	c := Candidate(n, T0)
	ensure1(t, s, T0, c)
	r := claim(t, s, T0, 1)[0]
	for i := range reqs {
		reqs[i].SchedulerKey = c.SchedulerKey
		if reqs[i].PayloadJSON == "" {
			reqs[i].PayloadJSON = "{}"
		}
	}
	if err := s.SchedulerComplete(context.Background(), store.SchedulerCompleteParams{ID: r.ID, Token: r.Version, Now: T0, Deliveries: reqs}); err != nil {
		t.Fatal(err)
	}
}

func req(key, bu string) store.NotificationRequest {
	return store.NotificationRequest{DeliveryKey: key, BusinessUnitID: bu, Channel: "log", Recipient: "a@example.test", Template: "t", LocalDate: "2026-10-01"}
}

// unpublished returns the outbox's unpublished messages (the first store.MaxBatch, oldest
// first), failing t when they cannot be listed.
func unpublished(t *testing.T, s store.Store) []store.OutboxMessage {
	t.Helper()
	msgs, err := s.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: store.MaxBatch})
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// deliveryKeysOf returns the delivery keys of the jobs of scheduler key (at most limit, as
// SupportNotificationList lists them), failing t when they cannot be listed.
func deliveryKeysOf(t *testing.T, s store.Store, key string, limit int) []string {
	t.Helper()
	jobs, err := s.SupportNotificationList(context.Background(), key, limit)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, j := range jobs {
		keys = append(keys, j.DeliveryKey)
	}
	return keys
}

// facts returns the unpublished delivery facts in the outbox, decoded, in order (an
// envelope's facts at its place).
func facts(t *testing.T, s store.Store) []store.DeliveryFact {
	t.Helper()
	var out []store.DeliveryFact
	var all []store.OutboxMessage
	for _, m := range unpublished(t, s) {
		items, err := m.Items()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, items...)
	}
	for _, m := range all {
		if m.Destination != topology.DeliveryFactsTopic {
			continue
		}
		var f store.DeliveryFact
		if err := json.Unmarshal(m.Body, &f); err != nil || m.MessageID != f.EventID || m.SessionID != f.CommandID {
			t.Fatalf("fact message %+v: %v", m, err)
		}
		out = append(out, f)
	}
	return out
}

// jobsByKey reads the stored job of each delivery key of keys, failing t on an error.
func jobsByKey(t *testing.T, s store.Store, keys []string) map[string]store.NotificationJob {
	t.Helper()
	out := make(map[string]store.NotificationJob, len(keys))
	for _, k := range keys {
		j, err := s.NotificationGetByKey(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = j
	}
	return out
}

func claimKey(t *testing.T, s store.Store, key string, now time.Time) store.NotificationClaimResult {
	t.Helper()
	r, err := s.NotificationClaim(context.Background(), store.NotificationClaimParams{DeliveryKey: key, Now: now, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func testCommandFacts(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	a := req("dk-a", "bu-1")
	dupEffect := req("dk-b", "bu-1")
	dupEffect.EffectKey = "dk-a" // the same effect under another delivery key: no second command
	otherBU := req("dk-c", "bu-2")
	otherBU.EffectKey = "dk-a" // unique per business unit only
	noDay := req("dk-d", "bu-1")
	noDay.LocalDate = ""
	queueJobs(t, s, 1, a, dupEffect, otherBU, noDay)
	if _, err := s.NotificationGetByKey(ctx, "dk-b"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a second command for one effect: %v", err)
	}
	j, err := s.NotificationGetByKey(ctx, "dk-c")
	if err != nil || j.EffectKey != "dk-a" || j.BusinessUnitID != "bu-2" {
		t.Fatalf("other business unit: %+v %v", j, err)
	}
	j, _ = s.NotificationGetByKey(ctx, "dk-a")
	if j.EffectKey != "dk-a" || j.LocalDate != "2026-10-01" || j.Revision != 1 || j.Status != store.NotificationQueued {
		t.Fatalf("new command: %+v", j)
	}
	if d, _ := s.NotificationGetByKey(ctx, "dk-d"); d.LocalDate != T0.Format("2006-01-02") {
		t.Fatalf("default local date: %q", d.LocalDate)
	}
	if fs := facts(t, s); len(fs) != 0 {
		t.Fatalf("queuing is no status change: %+v", fs)
	}
	c := claimKey(t, s, "dk-a", T0)
	if !c.Claimed || c.InDoubt || c.Job.Revision != 2 {
		t.Fatalf("claim: %+v", c)
	}
	// The lease expires: the take-over is in doubt, keeps the status and writes no fact.
	c2 := claimKey(t, s, "dk-a", T0.Add(time.Minute))
	if !c2.Claimed || !c2.InDoubt || c2.Job.Revision != 2 || c2.Job.AttemptCount != 2 {
		t.Fatalf("take-over: %+v", c2)
	}
	if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c2.Job.ID, Token: c2.Job.Version, Now: T0.Add(2 * time.Minute),
		Status: store.NotificationSent, ProviderReference: "ref", TemplateVersion: 4}); err != nil {
		t.Fatal(err)
	}
	fs := facts(t, s)
	if len(fs) != 2 || fs[0].Status != store.NotificationSending || fs[0].Revision != 2 || fs[0].EventID != "dk-a:r2" ||
		fs[1].Status != store.NotificationSent || fs[1].Revision != 3 || fs[1].EventID != "dk-a:r3" || fs[1].ProviderReference != "ref" ||
		!fs[1].OccurredOn.Equal(T0.Add(2*time.Minute)) || fs[1].LocalDate != "2026-10-01" || fs[1].EffectKey != "dk-a" || fs[1].BusinessUnitID != "bu-1" {
		t.Fatalf("facts: %+v", fs)
	}
	j, _ = s.NotificationGetByKey(ctx, "dk-a")
	if j.TemplateVersion != 4 || j.Revision != 3 || j.SentOn == nil {
		t.Fatalf("sent: %+v", j)
	}
}

func testSendClaimStates(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	queueJobs(t, s, 1, req("dk-1", "bu-1"))
	finish := func(c store.NotificationClaimResult, p store.NotificationFinishParams) error {
		p.ID, p.Token = c.Job.ID, c.Job.Version
		if p.Now.IsZero() {
			p.Now = T0
		}
		return s.NotificationFinish(ctx, p)
	}
	c := claimKey(t, s, "dk-1", T0)
	for name, p := range map[string]store.NotificationFinishParams{
		"retry without time":  {Status: store.NotificationQueued},
		"hold on a retry":     {Status: store.NotificationQueued, NextAttemptOn: ptr(T0), Hold: true},
		"hold on sent":        {Status: store.NotificationSent, Hold: true},
		"sending is no end":   {Status: store.NotificationSending},
		"sent with next time": {Status: store.NotificationSent, NextAttemptOn: ptr(T0)},
	} {
		if err := finish(c, p); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	next := T0.Add(5 * time.Minute)
	if err := finish(c, store.NotificationFinishParams{Status: store.NotificationQueued, NextAttemptOn: &next, Error: "451"}); err != nil {
		t.Fatal(err)
	}
	j, _ := s.NotificationGetByKey(ctx, "dk-1")
	if j.Status != store.NotificationQueued || j.RetryCount != 1 || j.NextAttemptOn == nil || !j.NextAttemptOn.Equal(next) || j.LastError != "451" || j.ProcessingLeaseExpiresOn != nil {
		t.Fatalf("retry: %+v", j)
	}
	if r := claimKey(t, s, "dk-1", next.Add(-time.Millisecond)); r.Claimed {
		t.Fatal("claimed before its retry time")
	}
	c = claimKey(t, s, "dk-1", next)
	if !c.Claimed || c.InDoubt {
		t.Fatalf("retry claim: %+v", c)
	}
	// Unknown with a lookup time: claimable then, in doubt.
	look := next.Add(time.Hour)
	if err := finish(c, store.NotificationFinishParams{Status: store.NotificationUnknown, NextAttemptOn: &look, Now: next}); err != nil {
		t.Fatal(err)
	}
	if r := claimKey(t, s, "dk-1", look.Add(-time.Second)); r.Claimed || r.Job.Status != store.NotificationUnknown {
		t.Fatalf("lookup before its time: %+v", r)
	}
	c = claimKey(t, s, "dk-1", look)
	if !c.Claimed || !c.InDoubt || c.Job.RetryCount != 2 {
		t.Fatalf("lookup claim: %+v", c)
	}
	// Unknown without a time: manual resolution only, never claimed.
	if err := finish(c, store.NotificationFinishParams{Status: store.NotificationUnknown, Now: look}); err != nil {
		t.Fatal(err)
	}
	if r := claimKey(t, s, "dk-1", look.AddDate(1, 0, 0)); r.Claimed {
		t.Fatal("a manual-resolution job was claimed")
	}
	// Hold: Failed on support hold.
	queueJobs(t, s, 2, req("dk-2", "bu-1"))
	c = claimKey(t, s, "dk-2", T0)
	if err := finish(c, store.NotificationFinishParams{Status: store.NotificationFailed, Hold: true, Error: "gave up"}); err != nil {
		t.Fatal(err)
	}
	if j, _ := s.NotificationGetByKey(ctx, "dk-2"); j.Status != store.NotificationFailed || !j.IsOnSupportHold {
		t.Fatalf("hold: %+v", j)
	}
	if r := claimKey(t, s, "dk-2", T0.AddDate(0, 0, 1)); r.Claimed {
		t.Fatal("a held job was claimed")
	}
	if err := finish(c, store.NotificationFinishParams{Status: store.NotificationSent}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("finish of a finished job: %v", err)
	}
}

func ptr(t time.Time) *time.Time { return &t }

func testClaimDue2(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	var reqs []store.NotificationRequest
	for i := 0; i < 5; i++ {
		reqs = append(reqs, req(fmt.Sprintf("dk-%d", i), "bu-1"))
	}
	queueJobs(t, s, 1, reqs...)
	if w, err := s.NotificationNextWakeUp(ctx); err != nil || w != nil {
		t.Fatalf("fresh Queued jobs are dispatched by message, not woken: %v %v", w, err)
	}
	// dk-0: retry at +10 min; dk-1: claimed, lease to +1 min; dk-2: lookup at +3 min;
	// dk-3: retry at +20 min but held after; dk-4 untouched.
	c0 := claimKey(t, s, "dk-0", T0)
	_ = s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c0.Job.ID, Token: c0.Job.Version, Now: T0, Status: store.NotificationQueued, NextAttemptOn: ptr(T0.Add(10 * time.Minute))})
	claimKey(t, s, "dk-1", T0)
	c2 := claimKey(t, s, "dk-2", T0)
	_ = s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c2.Job.ID, Token: c2.Job.Version, Now: T0, Status: store.NotificationUnknown, NextAttemptOn: ptr(T0.Add(3 * time.Minute))})
	if w, _ := s.NotificationNextWakeUp(ctx); w == nil || !w.Equal(T0.Add(time.Minute)) {
		t.Fatalf("wake-up = the lease expiry: %v", w)
	}
	if _, err := s.NotificationClaimDue(ctx, store.NotificationClaimDueParams{Now: T0, Lease: time.Minute, Limit: 0}); err == nil {
		t.Fatal("limit 0 accepted")
	}
	got, err := s.NotificationClaimDue(ctx, store.NotificationClaimDueParams{Now: T0.Add(30 * time.Second), Lease: time.Minute, Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("nothing due yet: %+v %v", got, err)
	}
	got, err = s.NotificationClaimDue(ctx, store.NotificationClaimDueParams{Now: T0.Add(5 * time.Minute), Lease: time.Minute, Limit: 10})
	if err != nil || len(got) != 2 || got[0].Job.DeliveryKey != "dk-1" || !got[0].InDoubt || got[1].Job.DeliveryKey != "dk-2" || !got[1].InDoubt {
		t.Fatalf("due at +5 min: %+v %v", got, err)
	}
	if w, _ := s.NotificationNextWakeUp(ctx); w == nil || !w.Equal(T0.Add(6*time.Minute)) {
		t.Fatalf("wake-up = the new leases: %v", w)
	}
	got, err = s.NotificationClaimDue(ctx, store.NotificationClaimDueParams{Now: T0.Add(10 * time.Minute), Lease: time.Minute, Limit: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("limit: %+v %v", got, err)
	}
}

// A job held Failed on support hold (a template missing) is listed per business unit and
// released once: Queued and due at the release, the hold cleared, claimed by the sweep; a
// release of another unit's job, with a stale version, or of a job not held changes nothing.
func testHeldRelease(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	queueJobs(t, s, 1, req("dk-1", "bu-1"), req("dk-2", "bu-1"), req("dk-3", "bu-2"))
	for _, k := range []string{"dk-1", "dk-3"} {
		c := claimKey(t, s, k, T0)
		if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: T0, Status: store.NotificationFailed,
			Error: "configuration: template missing", Hold: true}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.NotificationListHeld(ctx, store.NotificationListUnknownParams{BusinessUnitID: "bu-1", Limit: 10})
	if err != nil || len(list) != 1 || list[0].DeliveryKey != "dk-1" || !list[0].IsOnSupportHold {
		t.Fatalf("held of bu-1: %+v %v", list, err)
	}
	j := list[0]
	at := T0.Add(time.Hour)
	p := store.NotificationReleaseParams{DeliveryKey: "dk-1", BusinessUnitID: "bu-1", ExpectedVersion: j.Version, Now: at}
	guardRefuses(t, j.Version, func(bu string, version int64) error {
		q := p
		q.BusinessUnitID, q.ExpectedVersion = bu, version
		_, err := s.NotificationRelease(ctx, q)
		return err
	})
	notHeld := store.NotificationReleaseParams{DeliveryKey: "dk-2", BusinessUnitID: "bu-1", ExpectedVersion: 1, Now: at}
	if _, err := s.NotificationRelease(ctx, notHeld); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a job not held: %v", err)
	}
	r, err := s.NotificationRelease(ctx, p)
	if err != nil || r.Status != store.NotificationQueued || r.IsOnSupportHold || r.NextAttemptOn == nil || !r.NextAttemptOn.Equal(at) ||
		r.Version != j.Version+1 || r.AttemptCount != j.AttemptCount {
		t.Fatalf("released: %+v %v", r, err)
	}
	if _, err := s.NotificationRelease(ctx, p); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("released twice: %v", err)
	}
	if list, _ := s.NotificationListHeld(ctx, store.NotificationListUnknownParams{BusinessUnitID: "bu-1", Limit: 10}); len(list) != 0 {
		t.Fatalf("held after the release: %+v", list)
	}
	got, err := s.NotificationClaimDue(ctx, store.NotificationClaimDueParams{Now: at, Lease: time.Minute, Limit: 10})
	if err != nil || len(got) != 1 || got[0].Job.DeliveryKey != "dk-1" {
		t.Fatalf("the sweep's claim after the release: %+v %v", got, err)
	}
}

// guardRefuses checks the guard of a support update of job dk-1 of bu-1 at version (its
// stored Version): call (the update with the unit and expected version given) must be
// ErrNotFound from another unit, bu-2, and ErrLeaseLost at an older version.
func guardRefuses(t *testing.T, version int64, call func(bu string, version int64) error) {
	t.Helper()
	if err := call("bu-2", version); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("wrong business unit: %v", err)
	}
	if err := call("bu-1", version-1); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale version: %v", err)
	}
}

func testResolve(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	queueJobs(t, s, 1, req("dk-1", "bu-1"), req("dk-2", "bu-1"), req("dk-3", "bu-2"))
	for _, k := range []string{"dk-1", "dk-2", "dk-3"} {
		c := claimKey(t, s, k, T0)
		if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: T0, Status: store.NotificationUnknown, Error: "timeout"}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.NotificationListUnknown(ctx, store.NotificationListUnknownParams{BusinessUnitID: "bu-1", Limit: 1})
	if err != nil || len(list) != 1 || list[0].DeliveryKey != "dk-1" {
		t.Fatalf("page 1: %+v %v", list, err)
	}
	list2, _ := s.NotificationListUnknown(ctx, store.NotificationListUnknownParams{BusinessUnitID: "bu-1", AfterID: list[0].ID, Limit: 10})
	if len(list2) != 1 || list2[0].DeliveryKey != "dk-2" {
		t.Fatalf("page 2: %+v", list2)
	}
	j := list[0]
	p := store.NotificationResolveParams{DeliveryKey: "dk-1", BusinessUnitID: "bu-1", ExpectedVersion: j.Version, Status: store.NotificationSent,
		Operator: "ops", Reason: "seen in the provider portal", ProviderReference: "portal-1", Now: T0.Add(time.Hour)}
	guardRefuses(t, j.Version, func(bu string, version int64) error {
		q := p
		q.BusinessUnitID, q.ExpectedVersion = bu, version
		_, err := s.NotificationResolve(ctx, q)
		return err
	})
	bad := p
	bad.Status = store.NotificationQueued
	if _, err := s.NotificationResolve(ctx, bad); err == nil {
		t.Fatal("resolve to Queued accepted")
	}
	before := len(facts(t, s))
	r, err := s.NotificationResolve(ctx, p)
	if err != nil || r.Status != store.NotificationSent || r.ResolvedBy != "ops" || r.ResolutionReason != "seen in the provider portal" ||
		r.ProviderReference != "portal-1" || r.SentOn == nil || r.Version != j.Version+1 || r.Revision != j.Revision+1 {
		t.Fatalf("resolved: %+v %v", r, err)
	}
	fs := facts(t, s)
	if len(fs) != before+1 || fs[len(fs)-1].Status != store.NotificationSent || fs[len(fs)-1].ResolvedBy != "ops" {
		t.Fatalf("resolution fact: %+v", fs)
	}
	if _, err := s.NotificationResolve(ctx, p); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("resolved twice: %v", err)
	}
	missing := p
	missing.DeliveryKey = "dk-none"
	if _, err := s.NotificationResolve(ctx, missing); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
	if list, _ := s.NotificationListUnknown(ctx, store.NotificationListUnknownParams{BusinessUnitID: "bu-1", Limit: 10}); len(list) != 1 {
		t.Fatalf("queue after resolution: %+v", list)
	}
}

func testTemplates(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	save := func(bu, subject string, expected *int64) (store.NotificationTemplate, error) {
		return s.NotificationTemplateSave(ctx, store.NotificationTemplateSaveParams{Template: store.NotificationTemplate{Key: "k", BusinessUnitID: bu,
			Subject: subject, Text: "text", HTML: "<p>html</p>", CreatedBy: "ops"}, ExpectedVersion: expected, Now: T0})
	}
	if _, err := s.NotificationTemplateGet(ctx, "k", "bu-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("empty: %v", err)
	}
	d1, err := save("", "default 1", nil)
	if err != nil || d1.Version != 1 || !d1.CreatedOn.Equal(T0) {
		t.Fatalf("default v1: %+v %v", d1, err)
	}
	if got, _ := s.NotificationTemplateGet(ctx, "k", "bu-1"); got.Subject != "default 1" || got.BusinessUnitID != "" {
		t.Fatalf("fallback: %+v", got)
	}
	zero, one := int64(0), int64(1)
	if _, err := save("bu-1", "bu 1", &one); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("expected 1 with none stored: %v", err)
	}
	if o, err := save("bu-1", "bu 1", &zero); err != nil || o.Version != 1 {
		t.Fatalf("override: %+v %v", o, err)
	}
	if d2, err := save("", "default 2", &one); err != nil || d2.Version != 2 {
		t.Fatalf("default v2: %+v %v", d2, err)
	}
	got, err := s.NotificationTemplateGet(ctx, "k", "bu-1")
	if err != nil || got.Subject != "bu 1" || got.Text != "text" || got.HTML != "<p>html</p>" || got.CreatedBy != "ops" {
		t.Fatalf("override wins: %+v %v", got, err)
	}
	if got, _ := s.NotificationTemplateGet(ctx, "k", "bu-2"); got.Subject != "default 2" || got.Version != 2 {
		t.Fatalf("latest default: %+v", got)
	}
	if _, err := s.NotificationTemplateSave(ctx, store.NotificationTemplateSaveParams{Template: store.NotificationTemplate{Key: "k"}, Now: T0}); err == nil {
		t.Fatal("a template without CreatedBy was saved")
	}
	// A kind and its JSON are stored and read back; "" is stored as "message".
	push, err := s.NotificationTemplateSave(ctx, store.NotificationTemplateSaveParams{Template: store.NotificationTemplate{Key: "p", BusinessUnitID: "bu-1",
		Kind: "push", Subject: "title", Text: "body", Extra: `{"data":{"screen":"points"}}`, CreatedBy: "ops"}, Now: T0})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.NotificationTemplateGet(ctx, "p", "bu-1"); err != nil || got.Kind != "push" || got.Extra != push.Extra || got.Deleted {
		t.Fatalf("push kind: %+v %v", got, err)
	}
	if got, _ := s.NotificationTemplateGet(ctx, "k", "bu-2"); got.Kind != "message" {
		t.Fatalf("a template saved without a kind reads %q, want message", got.Kind)
	}
	// Deletion: a tombstone is the unit's next version; the unit renders the default again,
	// the version numbers go on, and the tombstone is guarded like any save.
	del := func(bu string, expected *int64) (store.NotificationTemplate, error) {
		return s.NotificationTemplateSave(ctx, store.NotificationTemplateSaveParams{Template: store.NotificationTemplate{Key: "k", BusinessUnitID: bu,
			Deleted: true, CreatedBy: "eve"}, ExpectedVersion: expected, Now: T0.Add(time.Hour)})
	}
	if _, err := del("bu-1", &zero); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a stale delete: %v", err)
	}
	tomb, err := del("bu-1", &one)
	if err != nil || tomb.Version != 2 || !tomb.Deleted {
		t.Fatalf("delete: %+v %v", tomb, err)
	}
	if got, err := s.NotificationTemplateGet(ctx, "k", "bu-1"); err != nil || got.BusinessUnitID != "" || got.Subject != "default 2" {
		t.Fatalf("after the unit's delete the default renders: %+v %v", got, err)
	}
	if _, err := del("bu-1", nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting a deleted template: %v", err)
	}
	if _, err := save("bu-1", "bu 1 again", &one); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("after a delete the live version is 0, not 1: %v", err)
	}
	if again, err := save("bu-1", "bu 1 again", &zero); err != nil || again.Version != 3 {
		t.Fatalf("saved again after the delete: %+v %v (want version 3: never reused)", again, err)
	}
	if _, err := del("", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NotificationTemplateGet(ctx, "k", "bu-2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the default deleted, a unit without its own: %v", err)
	}
}

func testProjection(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	f := func(cmd, bu, day string, st store.NotificationStatus, rev int64, at time.Time) store.DeliveryFact {
		return store.DeliveryFact{EventID: store.FactEventID(cmd, rev), CommandID: cmd, EffectKey: cmd, BusinessUnitID: bu, Channel: "log",
			LocalDate: day, Status: st, Revision: rev, OccurredOn: at}
	}
	batch := []store.DeliveryFact{
		f("c1", "bu-1", "2026-10-01", store.NotificationSent, 3, T0.Add(3*time.Minute)),
		f("c1", "bu-1", "2026-10-01", store.NotificationSending, 2, T0.Add(2*time.Minute)), // older, after the newer
		f("c2", "bu-1", "2026-10-01", store.NotificationUnknown, 3, T0.Add(4*time.Minute)),
		f("c3", "bu-1", "2026-10-02", store.NotificationFailed, 3, T0.Add(time.Minute)),
		f("c4", "bu-2", "2026-10-01", store.NotificationSent, 3, T0.Add(5*time.Minute)),
		f("c5", "bu-1", "2026-10-03", store.NotificationSending, 2, T0),
	}
	res, err := s.DeliveryFactApply(ctx, batch, T0.Add(time.Hour))
	if err != nil || res.Applied != 5 || res.Stale != 1 {
		t.Fatalf("apply: %+v %v", res, err)
	}
	res, err = s.DeliveryFactApply(ctx, batch, T0.Add(time.Hour)) // replayed
	if err != nil || res.Applied != 0 || res.Stale != 6 {
		t.Fatalf("replay: %+v %v", res, err)
	}
	counts, err := s.DeliveryCountsByDay(ctx, store.DeliveryCountsParams{BusinessUnitID: "bu-1", From: "2026-10-01", To: "2026-10-31"})
	want := []store.DeliveryDayCounts{{LocalDate: "2026-10-01", Sent: 1, Unknown: 1}, {LocalDate: "2026-10-02", Failed: 1}}
	if err != nil || fmt.Sprint(counts.Days) != fmt.Sprint(want) || counts.FreshTo == nil || !counts.FreshTo.Equal(T0.Add(5*time.Minute)) {
		t.Fatalf("counts: %+v %v", counts, err)
	}
	// The Unknown command is resolved (revision 4); an older fact arriving later is ignored.
	if _, err := s.DeliveryFactApply(ctx, []store.DeliveryFact{f("c2", "bu-1", "2026-10-01", store.NotificationFailed, 4, T0.Add(6*time.Minute)),
		f("c2", "bu-1", "2026-10-01", store.NotificationSending, 2, T0.Add(2*time.Minute))}, T0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	counts, _ = s.DeliveryCountsByDay(ctx, store.DeliveryCountsParams{BusinessUnitID: "bu-1", From: "2026-10-01", To: "2026-10-01"})
	if len(counts.Days) != 1 || counts.Days[0] != (store.DeliveryDayCounts{LocalDate: "2026-10-01", Sent: 1, Failed: 1}) || !counts.FreshTo.Equal(T0.Add(6*time.Minute)) {
		t.Fatalf("after resolution: %+v", counts)
	}
	empty, err := s.DeliveryCountsByDay(ctx, store.DeliveryCountsParams{BusinessUnitID: "bu-9", From: "2026-10-01", To: "2026-10-01"})
	if err != nil || empty.Days == nil || len(empty.Days) != 0 {
		t.Fatalf("no data: %+v %v", empty, err)
	}
	if _, err := s.DeliveryCountsByDay(ctx, store.DeliveryCountsParams{BusinessUnitID: "bu-1", From: "2026-10-02", To: "2026-10-01"}); err == nil {
		t.Fatal("reversed range accepted")
	}
	bad := f("c9", "bu-1", "2026-10-01", store.NotificationSent, 0, T0)
	if _, err := s.DeliveryFactApply(ctx, []store.DeliveryFact{bad}, T0); err == nil {
		t.Fatal("revision 0 accepted")
	}
	if _, err := s.DeliveryFactApply(ctx, make([]store.DeliveryFact, store.MaxBatch+1), T0); err == nil {
		t.Fatal("oversized batch accepted")
	}
}

// A provider reference comes from outside (a receiver's X-Request-Id header, an SMTP
// server's answer, an operator): it is stored cut to store.MaxProviderReference characters
// (UTF-16 code units, as SQL Server counts nvarchar), at a character boundary, so an
// over-long one never fails the write that records a send.
func testProviderReferenceBound(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	long := map[string]string{
		"dk-ascii": strings.Repeat("r", 5000),
		"dk-latin": strings.Repeat("é", 1000),
		"dk-emoji": strings.Repeat("😀", 300),
	}
	want := map[string]string{
		"dk-ascii": strings.Repeat("r", store.MaxProviderReference),
		"dk-latin": strings.Repeat("é", store.MaxProviderReference),
		"dk-emoji": strings.Repeat("😀", store.MaxProviderReference/2),
	}
	queueJobs(t, s, 1, req("dk-ascii", "bu-1"), req("dk-latin", "bu-1"), req("dk-emoji", "bu-1"), req("dk-unknown", "bu-1"))
	for k, ref := range long {
		c := claimKey(t, s, k, T0)
		if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: T0, Status: store.NotificationSent, ProviderReference: ref}); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		j, err := s.NotificationGetByKey(ctx, k)
		if err != nil || j.ProviderReference != want[k] {
			t.Fatalf("%s: stored %d bytes (%q...), want %d: %v", k, len(j.ProviderReference), truncated(j.ProviderReference), len(want[k]), err)
		}
	}
	c := claimKey(t, s, "dk-unknown", T0)
	if err := s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: T0, Status: store.NotificationUnknown, Error: "timeout"}); err != nil {
		t.Fatal(err)
	}
	r, err := s.NotificationResolve(ctx, store.NotificationResolveParams{DeliveryKey: "dk-unknown", BusinessUnitID: "bu-1", ExpectedVersion: c.Job.Version + 1,
		Status: store.NotificationSent, Operator: "ops", Reason: strings.Repeat("ü", 1500), ProviderReference: long["dk-latin"], Now: T0})
	if err != nil || r.ProviderReference != want["dk-latin"] || r.ResolutionReason != strings.Repeat("ü", 1000) {
		t.Fatalf("resolve: %d bytes, reason %d bytes: %v", len(r.ProviderReference), len(r.ResolutionReason), err)
	}
}

func truncated(v string) string {
	if len(v) > 20 {
		return v[:20]
	}
	return v
}

// A Queued job is started by its dispatch message. When that message is lost for good
// (dead-lettered after the broker's delivery count while SQL was unavailable), the job
// would wait forever: NotificationClaimDue with QueuedBefore also claims Queued jobs without
// a retry time that have not changed since QueuedBefore (not in doubt: nothing was sent).
func testClaimDueOrphans(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	queueJobs(t, s, 1, req("dk-orphan", "bu-1"), req("dk-retry", "bu-1"), req("dk-held", "bu-1"), req("dk-sent", "bu-1"))
	c := claimKey(t, s, "dk-retry", T0)
	_ = s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: T0, Status: store.NotificationQueued, NextAttemptOn: ptr(T0.Add(time.Hour))})
	c = claimKey(t, s, "dk-held", T0)
	_ = s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: T0, Status: store.NotificationFailed, Hold: true})
	c = claimKey(t, s, "dk-sent", T0)
	_ = s.NotificationFinish(ctx, store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: T0, Status: store.NotificationSent})
	now := T0.Add(20 * time.Minute)
	got, err := s.NotificationClaimDue(ctx, store.NotificationClaimDueParams{Now: now, Lease: time.Minute, Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("without QueuedBefore: %+v %v", got, err)
	}
	got, err = s.NotificationClaimDue(ctx, store.NotificationClaimDueParams{Now: now, Lease: time.Minute, Limit: 10, QueuedBefore: T0.Add(-time.Millisecond)})
	if err != nil || len(got) != 0 {
		t.Fatalf("changed after QueuedBefore: %+v %v", got, err)
	}
	got, err = s.NotificationClaimDue(ctx, store.NotificationClaimDueParams{Now: now, Lease: time.Minute, Limit: 10, QueuedBefore: T0})
	if err != nil || len(got) != 1 || got[0].Job.DeliveryKey != "dk-orphan" || got[0].InDoubt || got[0].Job.Status != store.NotificationSending {
		t.Fatalf("orphan: %+v %v", got, err)
	}
	got, err = s.NotificationClaimDue(ctx, store.NotificationClaimDueParams{Now: now, Lease: time.Minute, Limit: 10, QueuedBefore: now})
	if err != nil || len(got) != 0 {
		t.Fatalf("claimed twice: %+v %v", got, err)
	}
}

// testThroughput: SupportThroughput counts Sent, Failed and Unknown deliveries by the minute
// of their last change and their channel, within the window and the scope only; Queued ones
// are not counted.
func testThroughput(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	sms := req("dk-2", "bu-1")
	sms.Channel = "sms"
	queueJobs(t, s, 1, req("dk-1", "bu-1"), sms, req("dk-3", "bu-1"), req("dk-4", "bu-2"), req("dk-5", "bu-1"))
	end := func(key string, at time.Time, st store.NotificationStatus) {
		t.Helper()
		c := claimKey(t, s, key, at)
		p := store.NotificationFinishParams{ID: c.Job.ID, Token: c.Job.Version, Now: at, Status: st}
		if st == store.NotificationFailed {
			p.Error = "550"
		}
		if err := s.NotificationFinish(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	m0 := T0.Add(10 * time.Minute)
	end("dk-1", m0.Add(5*time.Second), store.NotificationSent)
	end("dk-2", m0.Add(50*time.Second), store.NotificationSent)
	end("dk-3", m0.Add(70*time.Second), store.NotificationFailed)
	end("dk-4", m0.Add(10*time.Second), store.NotificationSent) // bu-2
	get := func(sc automation.Scope, since, until time.Time) string {
		t.Helper()
		bs, err := s.SupportThroughput(ctx, store.SupportThroughputParams{Since: since, Until: until, Scope: sc})
		if err != nil {
			t.Fatal(err)
		}
		var out []string // by minute and status, the channels added up
		for i, b := range bs {
			if i > 0 && bs[i-1].Minute.Equal(b.Minute) && bs[i-1].Status == b.Status {
				var n int
				fmt.Sscanf(out[len(out)-1][strings.LastIndex(out[len(out)-1], " ")+1:], "%d", &n)
				out[len(out)-1] = fmt.Sprintf("%s %s %d", b.Minute.UTC().Format("15:04:05"), b.Status, n+b.Count)
				continue
			}
			out = append(out, fmt.Sprintf("%s %s %d", b.Minute.UTC().Format("15:04:05"), b.Status, b.Count))
		}
		return strings.Join(out, ", ")
	}
	bs, err := s.SupportThroughput(ctx, store.SupportThroughputParams{Since: T0, Until: T0.Add(time.Hour), Scope: automation.BusinessUnits("bu-1")})
	if err != nil {
		t.Fatal(err)
	}
	var byChannel []string
	for _, b := range bs {
		byChannel = append(byChannel, fmt.Sprintf("%s %s %s %d", b.Minute.UTC().Format("15:04:05"), b.Status, b.Channel, b.Count))
	}
	if got, want := strings.Join(byChannel, ", "), "00:10:00 Sent log 1, 00:10:00 Sent sms 1, 00:11:00 Failed log 1"; got != want {
		t.Fatalf("bu-1 throughput by channel: %q, want %q", got, want)
	}
	if got, want := get(automation.BusinessUnits("bu-1"), T0, T0.Add(time.Hour)), "00:10:00 Sent 2, 00:11:00 Failed 1"; got != want {
		t.Fatalf("bu-1 throughput: %q, want %q", got, want)
	}
	all := get(automation.AllBusinessUnits(), T0, T0.Add(time.Hour))
	if !strings.Contains(all, "Sent 3") || !strings.Contains(all, "Failed 1") {
		t.Fatalf("every unit: %q", all)
	}
	if got := get(automation.AllBusinessUnits(), m0.Add(time.Minute), T0.Add(time.Hour)); !strings.HasSuffix(got, "Failed 1") || strings.Contains(got, "Sent") {
		t.Fatalf("window from the second minute: %q", got)
	}
	if got := get(automation.Scope{}, T0, T0.Add(time.Hour)); got != "" {
		t.Fatalf("the zero scope sees nothing: %q", got)
	}
	if _, err := s.SupportThroughput(ctx, store.SupportThroughputParams{Since: T0, Until: T0.Add(25 * time.Hour), Scope: automation.AllBusinessUnits()}); err == nil {
		t.Fatal("a window over MaxThroughputWindow accepted")
	}
}

// testFirstClaimKept: every send claim (NotificationClaim, NotificationClaimMany) keeps the
// job's first claim in FirstClaimedOn as store.FirstClaim says (issue 38, migration 0071):
// the first claim's Now; kept by a lease takeover in doubt, a retry and a lookup; moved to a
// later claim's Now only when every earlier claim ended in a wait (AttemptCount back to 0,
// nothing sent). The in-doubt gate of an idempotent channel compares the opt-out with it.
func testFirstClaimKept(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	queueJobs(t, s, 1, req("dk-1", "bu-1"), req("dk-2", "bu-1"), req("dk-3", "bu-1"), req("dk-4", "bu-1"))
	want := func(what string, j store.NotificationJob, at time.Time) {
		t.Helper()
		if j.FirstClaimedOn == nil || !j.FirstClaimedOn.Equal(at) {
			t.Fatalf("%s: FirstClaimedOn %v, want %v (%+v)", what, j.FirstClaimedOn, at, j)
		}
		if got := store.FirstClaim(0, nil, j.CreatedOn, at); !got.Equal(at) {
			t.Fatalf("FirstClaim of a first claim: %v", got)
		}
		stored, err := s.NotificationGetByKey(ctx, j.DeliveryKey)
		if err != nil || stored.FirstClaimedOn == nil || !stored.FirstClaimedOn.Equal(at) {
			t.Fatalf("%s: stored FirstClaimedOn %v, want %v (%v)", what, stored.FirstClaimedOn, at, err)
		}
	}
	if j, _ := s.NotificationGetByKey(ctx, "dk-1"); j.FirstClaimedOn != nil {
		t.Fatalf("a job never claimed has FirstClaimedOn %v", j.FirstClaimedOn)
	}
	claimMany := func(now time.Time, keys ...string) []store.NotificationClaimResult {
		t.Helper()
		rs, err := s.NotificationClaimMany(ctx, store.NotificationClaimManyParams{DeliveryKeys: keys, Now: now, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	finish := func(c store.NotificationClaimResult, p store.NotificationFinishParams) {
		t.Helper()
		p.ID, p.Token = c.Job.ID, c.Job.Version
		if err := s.NotificationFinish(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	t1 := T0.Add(time.Second)
	// One by one: the first claim, a takeover in doubt, a retry, a lookup.
	c := claimKey(t, s, "dk-1", t1)
	want("first claim", c.Job, t1)
	c = claimKey(t, s, "dk-1", t1.Add(time.Minute))
	if !c.InDoubt {
		t.Fatalf("takeover: %+v", c)
	}
	want("takeover in doubt", c.Job, t1)
	retry := t1.Add(5 * time.Minute)
	finish(c, store.NotificationFinishParams{Status: store.NotificationQueued, NextAttemptOn: &retry, Now: t1.Add(time.Minute), Error: "451"})
	c = claimKey(t, s, "dk-1", retry)
	want("retry", c.Job, t1)
	look := retry.Add(time.Hour)
	finish(c, store.NotificationFinishParams{Status: store.NotificationUnknown, NextAttemptOn: &look, Now: retry})
	c = claimKey(t, s, "dk-1", look)
	want("lookup", c.Job, t1)
	// A claim that ended in a wait (quiet hours) counts for nothing: the next claim is the
	// first that may send.
	c = claimKey(t, s, "dk-2", t1)
	want("claim before the wait", c.Job, t1)
	until := t1.Add(8 * time.Hour)
	finish(c, store.NotificationFinishParams{Status: store.NotificationQueued, NextAttemptOn: &until, Wait: true, Now: t1, Error: "quiet hours"})
	c = claimKey(t, s, "dk-2", until)
	if c.Job.AttemptCount != 1 {
		t.Fatalf("claim after the wait: %+v", c.Job)
	}
	want("claim after a wait", c.Job, until)
	c = claimKey(t, s, "dk-2", until.Add(time.Minute))
	want("takeover after a wait", c.Job, until)
	// The batch claim: the same rule, in the row it returns and in the stored row.
	rs := claimMany(t1, "dk-3", "dk-4")
	want("batch first claim", rs[0].Job, t1)
	want("batch first claim", rs[1].Job, t1)
	finish(rs[1], store.NotificationFinishParams{Status: store.NotificationQueued, NextAttemptOn: &until, Wait: true, Now: t1, Error: "quiet hours"})
	rs = claimMany(until, "dk-3", "dk-4")
	if !rs[0].Claimed || !rs[0].InDoubt || !rs[1].Claimed || rs[1].InDoubt {
		t.Fatalf("batch takeover and claim after a wait: %+v", rs)
	}
	want("batch takeover in doubt", rs[0].Job, t1)
	want("batch claim after a wait", rs[1].Job, until)
	if got := store.FirstClaim(2, nil, T0, until); !got.Equal(T0) {
		t.Fatalf("FirstClaim of a row claimed before the column existed: %v, want its CreatedOn", got)
	}
}
