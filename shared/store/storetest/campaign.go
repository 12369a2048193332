package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/automation-platform/automation/shared/automation"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// RunCampaign is the campaign part of the suite (docs/campaigns.md): campaigns with
// If-Match, executions started once, exclusive claims that freeze parameters, guarded
// outcomes with the post-result hook, chain advances once, the manual queue, the projection
// and the outbox relay's lease and purge.
func RunCampaign(t *testing.T, open Opener) {
	runCases(t, open, campaignCases)
}

func campaignFixture(bu, id string) store.Campaign {
	return store.Campaign{BusinessUnitID: bu, CampaignID: id, Name: "Welcome", Status: store.CampaignActive, RunID: "r1",
		Triggers: []string{"SignedUp", "Upgraded"}, DefinitionJSON: `{"actions":[]}`}
}

func testCampaignSave(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	zero := int64(0)
	c, err := s.CampaignSave(ctx, store.CampaignSaveParams{Campaign: campaignFixture("bu-1", "c1"), ExpectedVersion: &zero, Now: T0})
	if err != nil || c.Version != 1 || len(c.Triggers) != 2 || !c.CreatedOn.Equal(T0) {
		t.Fatalf("create = %+v, %v", c, err)
	}
	if _, err := s.CampaignSave(ctx, store.CampaignSaveParams{Campaign: campaignFixture("bu-1", "c1"), ExpectedVersion: &zero, Now: T0}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second create = %v, want ErrConflict", err)
	}
	stale := int64(7)
	if _, err := s.CampaignSave(ctx, store.CampaignSaveParams{Campaign: campaignFixture("bu-1", "c1"), ExpectedVersion: &stale, Now: T0}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale replace = %v, want ErrConflict", err)
	}
	upd := campaignFixture("bu-1", "c1")
	upd.Triggers = []string{"Upgraded"}
	one := int64(1)
	c, err = s.CampaignSave(ctx, store.CampaignSaveParams{Campaign: upd, ExpectedVersion: &one, Now: T0.Add(time.Minute)})
	if err != nil || c.Version != 2 || len(c.Triggers) != 1 {
		t.Fatalf("replace = %+v, %v", c, err)
	}
	if l, _ := s.CampaignListByTrigger(ctx, "bu-1", "SignedUp"); len(l) != 0 {
		t.Fatalf("removed trigger still matches: %+v", l)
	}
	if l, _ := s.CampaignListByTrigger(ctx, "bu-1", "Upgraded"); len(l) != 1 {
		t.Fatalf("by trigger = %+v", l)
	}
	if l, _ := s.CampaignListByTrigger(ctx, "bu-2", "Upgraded"); len(l) != 0 {
		t.Fatalf("another business unit sees the campaign: %+v", l)
	}
	upd.Status = store.CampaignStopped
	if _, err := s.CampaignSave(ctx, store.CampaignSaveParams{Campaign: upd, Now: T0}); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.CampaignListByTrigger(ctx, "bu-1", "Upgraded"); len(l) != 0 {
		t.Fatalf("a stopped campaign is triggered: %+v", l)
	}
	if _, err := s.CampaignGet(ctx, "bu-2", "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get in another unit = %v", err)
	}
	if l, err := s.CampaignList(ctx, "bu-1", "", 10); err != nil || len(l) != 1 || len(l[0].Triggers) != 1 {
		t.Fatalf("list = %+v, %v", l, err)
	}
}

func startFixture(n int) store.CampaignStartParams {
	exe := fmt.Sprintf("cx-%d", n)
	return store.CampaignStartParams{
		Execution: store.CampaignExecution{ExecutionID: exe, BusinessUnitID: "bu-1", CampaignID: "c1", RunID: "r1",
			RecipientID: fmt.Sprintf("cust-%d", n), SourceEventID: fmt.Sprintf("evt-%d", n), LocalDate: "2026-10-01", DefinitionJSON: `{}`},
		Command: commandFixture(exe, 0),
		Outbox:  []store.OutboxMessage{{MessageID: exe + ":0:cmd", Destination: "campaign-commands", Body: []byte(`{}`)}},
		Now:     T0,
	}
}

func commandFixture(exe string, i int) store.CampaignCommand {
	return store.CampaignCommand{CommandID: fmt.Sprintf("%s:%d:a%d", exe, i, i), EffectKey: fmt.Sprintf("ce-%s-%d", exe, i), ExecutionID: exe,
		BusinessUnitID: "bu-1", CampaignID: "c1", RecipientID: "cust", ActionIndex: i, ActionKey: fmt.Sprintf("a%d", i),
		ActionType: "TOP_UP", Provider: "sim", LocalDate: "2026-10-01"}
}

func testCampaignStartOnce(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	n := raceWins(t, 8, func(int) (bool, error) {
		r, err := s.CampaignStart(ctx, startFixture(1))
		return r.Created, err
	})
	if n != 1 {
		t.Fatalf("%d of 8 concurrent starts created the execution, want 1", n)
	}
	cmds, err := s.CampaignCommandsOf(ctx, "cx-1")
	if err != nil || len(cmds) != 1 || cmds[0].Status != store.CommandQueued || cmds[0].Revision != 1 || cmds[0].ParamsJSON != "" {
		t.Fatalf("commands = %+v, %v", cmds, err)
	}
	msgs, _ := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
	if len(msgs) != 1 {
		t.Fatalf("outbox = %d rows, want 1", len(msgs))
	}
	e, err := s.CampaignExecutionGet(ctx, "cx-1")
	if err != nil || e.Status != store.ExecutionRunning || e.CurrentIndex != 0 {
		t.Fatalf("execution = %+v, %v", e, err)
	}
}

// testCampaignStartMany: a batch of starts is written in one transaction, in order, each as
// CampaignStart writes it (an existing execution, or one started earlier in the same batch,
// writes nothing and reads Created false); a batch with an item the store refuses writes
// nothing, and one past store.MaxBatch is refused.
func testCampaignStartMany(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	if _, err := s.CampaignStart(ctx, startFixture(1)); err != nil {
		t.Fatal(err)
	}
	// A refused item (its command takes cx-1's effect key: another step's command) in the batch.
	bad := startFixture(3)
	bad.Command.EffectKey = startFixture(1).Command.EffectKey
	if _, err := s.CampaignStartMany(ctx, []store.CampaignStartParams{startFixture(2), bad}); err == nil {
		t.Fatal("a batch with a refused start was written")
	}
	if _, err := s.CampaignExecutionGet(ctx, "cx-2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused batch left cx-2: %v", err)
	}
	if msgs, _ := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100}); len(msgs) != 1 {
		t.Fatalf("outbox = %d rows after the refused batch, want cx-1's only", len(msgs))
	}
	got, err := s.CampaignStartMany(ctx, []store.CampaignStartParams{startFixture(2), startFixture(1), startFixture(3), startFixture(2)})
	if err != nil {
		t.Fatal(err)
	}
	var created []bool
	for i, r := range got {
		created = append(created, r.Created)
		if want := []string{"cx-2", "cx-1", "cx-3", "cx-2"}[i]; r.Execution.ExecutionID != want || r.Execution.Status != store.ExecutionRunning {
			t.Fatalf("result %d = %+v, want %s RUNNING", i, r.Execution, want)
		}
	}
	if want := []bool{true, false, true, false}; !slices.Equal(created, want) {
		t.Fatalf("created %v, want %v", created, want)
	}
	for _, exe := range []string{"cx-1", "cx-2", "cx-3"} {
		cmds, err := s.CampaignCommandsOf(ctx, exe)
		if err != nil || len(cmds) != 1 || cmds[0].Status != store.CommandQueued || cmds[0].Revision != 1 {
			t.Fatalf("%s commands = %+v, %v; want one QUEUED", exe, cmds, err)
		}
	}
	msgs, _ := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.MessageID)
	}
	if want := []string{"cx-1:0:cmd", "cx-2:0:cmd", "cx-3:0:cmd"}; !slices.Equal(ids, want) {
		t.Fatalf("outbox = %v, want %v (one command message per execution created, in order)", ids, want)
	}
	if r, err := s.CampaignStartMany(ctx, nil); err != nil || len(r) != 0 {
		t.Fatalf("an empty batch = %v, %v", r, err)
	}
	if _, err := s.CampaignStartMany(ctx, make([]store.CampaignStartParams, store.MaxBatch+1)); err == nil {
		t.Fatal("a batch past store.MaxBatch was taken")
	}
}

// testCampaignExecutionList: one campaign's executions of one business unit, newest first,
// paged by the Id below which the next page starts; another campaign's and another unit's
// executions (even of a campaign with the same id) are never listed.
func testCampaignExecutionList(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	start := func(n int, bu, campaignID string) {
		p := startFixture(n)
		p.Execution.BusinessUnitID, p.Execution.CampaignID = bu, campaignID
		p.Command.BusinessUnitID, p.Command.CampaignID = bu, campaignID
		if _, err := s.CampaignStart(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	start(1, "bu-1", "c1")
	start(2, "bu-2", "c1") // same campaign id, another unit
	start(3, "bu-1", "c1")
	start(4, "bu-1", "c2") // another campaign
	start(5, "bu-1", "c1")
	ids := func(es []store.CampaignExecution) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.ExecutionID)
		}
		return out
	}
	first, err := s.CampaignExecutionList(ctx, "bu-1", "c1", 0, 2)
	if err != nil || fmt.Sprint(ids(first)) != "[cx-5 cx-3]" {
		t.Fatalf("first page = %v, %v; want [cx-5 cx-3]", ids(first), err)
	}
	if e := first[0]; e.BusinessUnitID != "bu-1" || e.CampaignID != "c1" || e.RecipientID != "cust-5" || e.Status != store.ExecutionRunning || !e.CreatedOn.Equal(T0) {
		t.Fatalf("execution = %+v", e)
	}
	next, err := s.CampaignExecutionList(ctx, "bu-1", "c1", first[1].ID, 2)
	if err != nil || fmt.Sprint(ids(next)) != "[cx-1]" {
		t.Fatalf("second page = %v, %v; want [cx-1]", ids(next), err)
	}
	if l, _ := s.CampaignExecutionList(ctx, "bu-1", "c1", next[0].ID, 2); len(l) != 0 {
		t.Fatalf("past the last page = %v", ids(l))
	}
	if l, _ := s.CampaignExecutionList(ctx, "bu-2", "c1", 0, 10); fmt.Sprint(ids(l)) != "[cx-2]" {
		t.Fatalf("bu-2's c1 = %v, want [cx-2] only", ids(l))
	}
	if l, _ := s.CampaignExecutionList(ctx, "bu-1", "c9", 0, 10); len(l) != 0 {
		t.Fatalf("an unknown campaign lists %v", ids(l))
	}
	if _, err := s.CampaignExecutionList(ctx, "bu-1", "c1", 0, 0); err == nil {
		t.Fatal("limit 0 was accepted")
	}
}

// freshStarted opens a fresh store and starts startFixture(1) in it; it returns the store
// and the id of the started command.
func freshStarted(t *testing.T, open Opener) (store.Store, string) {
	t.Helper()
	s := fresh(t, open)
	p := startFixture(1)
	if _, err := s.CampaignStart(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return s, p.Command.CommandID
}

// claimCommand claims command id at T0 (a one-minute lease, frozen params "{}") and fails
// the test unless it is claimed.
func claimCommand(t *testing.T, s store.Store, id string) store.CampaignClaimResult {
	t.Helper()
	r, err := s.CampaignClaim(context.Background(), store.CampaignClaimParams{CommandID: id, Now: T0, Lease: time.Minute, FreezeParams: `{}`})
	if err != nil || !r.Claimed {
		t.Fatal(r, err)
	}
	return r
}

func testCampaignClaim(t *testing.T, open Opener) {
	s, id := freshStarted(t, open)
	ctx := context.Background()
	if _, err := s.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: "nope", Now: T0, Lease: time.Minute}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("claim unknown = %v", err)
	}
	claimed := raceWins(t, 6, func(i int) (bool, error) {
		r, err := s.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: id, Now: T0, Lease: time.Minute, FreezeParams: fmt.Sprintf(`{"n":%d}`, i)})
		return r.Claimed, err
	})
	if claimed != 1 {
		t.Fatalf("%d concurrent claims succeeded, want 1", claimed)
	}
	c, _ := s.CampaignCommandGet(ctx, id)
	frozen := c.ParamsJSON
	if c.Status != store.CommandRunning || frozen == "" || c.AttemptCount != 1 || c.Revision != 2 {
		t.Fatalf("after claim: %+v", c)
	}
	// Live lease: not claimable; expired: claimable in doubt, parameters kept.
	if r, _ := s.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: id, Now: T0.Add(59 * time.Second), Lease: time.Minute}); r.Claimed {
		t.Fatal("claimed under a live lease")
	}
	r, err := s.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: id, Now: T0.Add(time.Minute), Lease: time.Minute, FreezeParams: `{"n":99}`})
	if err != nil || !r.Claimed || !r.InDoubt || r.Command.ParamsJSON != frozen || r.Command.Revision != 2 {
		t.Fatalf("reclaim = %+v, %v (frozen %s)", r, err, frozen)
	}
	// The due sweep finds expired leases and retries, not live ones.
	due, err := s.CampaignClaimDue(ctx, store.CampaignClaimDueParams{Now: T0.Add(time.Minute), Lease: time.Minute, Limit: 10})
	if err != nil || len(due) != 0 {
		t.Fatalf("due under a live lease = %+v, %v", due, err)
	}
	if w, err := s.CampaignNextWakeUp(ctx); err != nil || w == nil || !w.Equal(T0.Add(2*time.Minute)) {
		t.Fatalf("wake-up = %v, %v, want the lease's end", w, err)
	}
	if m, err := s.CampaignMetricsRead(ctx, "", T0.Add(2*time.Minute)); err != nil || m.PastLease != 1 || m.Waiting != 0 {
		t.Fatalf("metrics past the lease = %+v, %v", m, err)
	}
	due, err = s.CampaignClaimDue(ctx, store.CampaignClaimDueParams{Now: T0.Add(3 * time.Minute), Lease: time.Minute, Limit: 10})
	if err != nil || len(due) != 1 || !due[0].InDoubt {
		t.Fatalf("due after the lease = %+v, %v", due, err)
	}
}

// testCampaignClaimMany: a batch of claims is made in one transaction, in order, each as
// CampaignClaim makes it (frozen parameters, its in-claim hook run with the claimed command);
// a command named twice is claimed once; a batch with an unknown command or a failing hook
// writes nothing (no claim, no hook's write), and one past store.MaxBatch is refused.
func testCampaignClaimMany(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	var ids []string
	for n := 1; n <= 3; n++ {
		p := startFixture(n)
		if _, err := s.CampaignStart(ctx, p); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.Command.CommandID)
	}
	var hooked []string
	hook := func(fail bool) func(context.Context, *sql.Tx, store.CampaignCommand) error {
		return func(ctx context.Context, tx *sql.Tx, c store.CampaignCommand) error {
			if c.Status != store.CommandRunning || c.ParamsJSON == "" {
				return fmt.Errorf("the hook saw %s with params %q, want the claimed command", c.Status, c.ParamsJSON)
			}
			hooked = append(hooked, c.CommandID)
			if fail {
				return errors.New("hook refused")
			}
			return nil
		}
	}
	claim := func(id string, h func(context.Context, *sql.Tx, store.CampaignCommand) error) store.CampaignClaimParams {
		return store.CampaignClaimParams{CommandID: id, Now: T0, Lease: time.Minute, FreezeParams: `{"p":"` + id + `"}`, InTx: h}
	}
	unclaimed := func(when string) {
		t.Helper()
		for _, id := range ids {
			if c, _ := s.CampaignCommandGet(ctx, id); c.Status != store.CommandQueued || c.ParamsJSON != "" {
				t.Fatalf("%s: %s is %s with params %q, want QUEUED, nothing frozen", when, id, c.Status, c.ParamsJSON)
			}
		}
	}
	if _, err := s.CampaignClaimMany(ctx, []store.CampaignClaimParams{claim(ids[0], nil), claim("nope", nil)}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a batch with an unknown command = %v, want ErrNotFound", err)
	}
	unclaimed("after the batch with an unknown command")
	if _, err := s.CampaignClaimMany(ctx, []store.CampaignClaimParams{claim(ids[0], hook(false)), claim(ids[1], hook(true))}); err == nil {
		t.Fatal("a batch whose hook failed was written")
	}
	unclaimed("after the batch whose hook failed")
	hooked = nil
	got, err := s.CampaignClaimMany(ctx, []store.CampaignClaimParams{claim(ids[1], hook(false)), claim(ids[0], nil), claim(ids[1], hook(false)), claim(ids[2], hook(false))})
	if err != nil {
		t.Fatal(err)
	}
	var claimed []bool
	for _, r := range got {
		claimed = append(claimed, r.Claimed)
	}
	if want := []bool{true, true, false, true}; !slices.Equal(claimed, want) {
		t.Fatalf("claimed %v, want %v (the second claim of %s finds it leased)", claimed, want, ids[1])
	}
	if want := []string{ids[1], ids[2]}; !slices.Equal(hooked, want) {
		t.Fatalf("hooks ran for %v, want %v (once per command claimed, none for a claim that did not take)", hooked, want)
	}
	for i, r := range got {
		id := []string{ids[1], ids[0], ids[1], ids[2]}[i]
		c, _ := s.CampaignCommandGet(ctx, id)
		if c.Status != store.CommandRunning || c.AttemptCount != 1 || c.Revision != 2 || c.ParamsJSON != `{"p":"`+id+`"}` {
			t.Fatalf("%s after the batch: %+v", id, c)
		}
		if r.Command.CommandID != id || (r.Claimed && (r.Command.Version != c.Version || r.InDoubt || r.Before != store.CommandQueued)) {
			t.Fatalf("result %d = %+v, want %s claimed from QUEUED at version %d", i, r, id, c.Version)
		}
	}
	if r, err := s.CampaignClaimMany(ctx, nil); err != nil || len(r) != 0 {
		t.Fatalf("an empty batch = %v, %v", r, err)
	}
	if _, err := s.CampaignClaimMany(ctx, make([]store.CampaignClaimParams, store.MaxBatch+1)); err == nil {
		t.Fatal("a batch past store.MaxBatch was taken")
	}
}

func testCampaignFinish(t *testing.T, open Opener) {
	s, id := freshStarted(t, open)
	ctx := context.Background()
	r := claimCommand(t, s, id)
	if _, err := s.CampaignFinish(ctx, store.CampaignFinishParams{CommandID: id, Token: r.Command.Version - 1, Now: T0, Status: store.CommandSucceeded}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale token = %v", err)
	}
	hookErr := errors.New("hook refused")
	_, err := s.CampaignFinish(ctx, store.CampaignFinishParams{CommandID: id, Token: r.Command.Version, Now: T0, Status: store.CommandSucceeded,
		InTx: func(context.Context, *sql.Tx, store.CampaignCommand) error { return hookErr }})
	if !errors.Is(err, hookErr) {
		t.Fatalf("hook error = %v", err)
	}
	if c, _ := s.CampaignCommandGet(ctx, id); c.Status != store.CommandRunning {
		t.Fatalf("a failed hook left the outcome written: %+v", c)
	}
	var seen store.CampaignCommand
	next := T0.Add(time.Hour)
	if _, err := s.CampaignFinish(ctx, store.CampaignFinishParams{CommandID: id, Token: r.Command.Version, Now: T0, Status: store.CommandSucceeded, NextAttemptOn: &next}); err == nil {
		t.Fatal("terminal outcome with NextAttemptOn accepted")
	}
	c, err := s.CampaignFinish(ctx, store.CampaignFinishParams{CommandID: id, Token: r.Command.Version, Now: T0, Status: store.CommandSucceeded,
		ProviderRef: "ref-1", ResultJSON: `{"ok":true}`,
		Outbox: []store.OutboxMessage{{MessageID: id + ":result", Destination: "campaign-results", Body: []byte(`{}`)}},
		InTx:   func(_ context.Context, _ *sql.Tx, c store.CampaignCommand) error { seen = c; return nil }})
	if err != nil || c.Status != store.CommandSucceeded || c.ProviderRef != "ref-1" || c.Revision != 3 || seen.Revision != 3 {
		t.Fatalf("finish = %+v, %v (hook saw %+v)", c, err, seen)
	}
	msgs, _ := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
	var facts int
	for _, m := range msgs {
		if m.Destination == "campaign-facts" {
			facts++
		}
	}
	if facts != 2 { // RUNNING (r2), SUCCEEDED (r3)
		t.Fatalf("%d facts, want 2", facts)
	}
	if r, _ := s.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: id, Now: T0.Add(time.Hour), Lease: time.Minute}); r.Claimed {
		t.Fatal("a terminal command was claimed")
	}
}

// testCampaignFinishMany: the outcomes of a batch in one transaction, in order. A stale token,
// and a command named a second time (its first outcome moved its version), is that item's
// ErrLeaseLost with nothing written for it while the others are written; an InTx error or an
// invalid outcome writes nothing of the batch; exactly one result message per command.
func testCampaignFinishMany(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	var ids []string
	var tokens []int64
	for n := 1; n <= 3; n++ {
		p := startFixture(n)
		if _, err := s.CampaignStart(ctx, p); err != nil {
			t.Fatal(err)
		}
		r := claimCommand(t, s, p.Command.CommandID)
		ids, tokens = append(ids, p.Command.CommandID), append(tokens, r.Command.Version)
	}
	done := func(i int, in func(context.Context, *sql.Tx, store.CampaignCommand) error) store.CampaignFinishParams {
		return store.CampaignFinishParams{CommandID: ids[i], Token: tokens[i], Now: T0, Status: store.CommandSucceeded, InTx: in,
			Outbox: []store.OutboxMessage{{MessageID: ids[i] + ":result", Destination: "campaign-results", Body: []byte(`{}`)}}}
	}
	running := func(when string) {
		t.Helper()
		for _, id := range ids {
			if c, _ := s.CampaignCommandGet(ctx, id); c.Status != store.CommandRunning {
				t.Fatalf("%s: %s is %s, want RUNNING", when, id, c.Status)
			}
		}
	}
	refuse := func(context.Context, *sql.Tx, store.CampaignCommand) error { return errors.New("hook refused") }
	if _, err := s.CampaignFinishMany(ctx, []store.CampaignFinishParams{done(0, nil), done(1, refuse)}); err == nil {
		t.Fatal("a batch whose hook failed was written")
	}
	running("after the batch whose hook failed")
	bad := done(1, nil)
	bad.Status = store.CommandRunning
	if _, err := s.CampaignFinishMany(ctx, []store.CampaignFinishParams{done(0, nil), bad}); err == nil {
		t.Fatal("a batch with an outcome that is no outcome was written")
	}
	running("after the batch with an invalid outcome")
	stale := done(2, nil)
	stale.Token--
	var hooked []string
	seen := func(_ context.Context, _ *sql.Tx, c store.CampaignCommand) error {
		hooked = append(hooked, c.CommandID)
		return nil
	}
	res, err := s.CampaignFinishMany(ctx, []store.CampaignFinishParams{done(0, seen), stale, done(1, seen), done(0, seen)})
	if err != nil || len(res) != 4 {
		t.Fatalf("batch = %v, %v", res, err)
	}
	if res[0].Err != nil || res[0].Command.Status != store.CommandSucceeded || res[2].Err != nil || res[2].Command.CommandID != ids[1] {
		t.Fatalf("written outcomes = %+v, %+v", res[0], res[2])
	}
	if !errors.Is(res[1].Err, store.ErrLeaseLost) || !errors.Is(res[3].Err, store.ErrLeaseLost) {
		t.Fatalf("a stale token and a command finished twice = %v, %v, want ErrLeaseLost", res[1].Err, res[3].Err)
	}
	if len(hooked) != 2 || hooked[0] != ids[0] || hooked[1] != ids[1] {
		t.Fatalf("the hooks ran for %v, want %v once each, in order", hooked, ids[:2])
	}
	if c, _ := s.CampaignCommandGet(ctx, ids[2]); c.Status != store.CommandRunning {
		t.Fatalf("the stale outcome was written: %+v", c)
	}
	msgs, _ := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
	results := map[string]int{}
	for _, m := range msgs {
		if m.Destination == "campaign-results" {
			results[m.MessageID]++
		}
	}
	if len(results) != 2 || results[ids[0]+":result"] != 1 || results[ids[1]+":result"] != 1 {
		t.Fatalf("result messages %v, want one for each of %v", results, ids[:2])
	}
	if r, err := s.CampaignFinishMany(ctx, nil); err != nil || len(r) != 0 {
		t.Fatalf("an empty batch = %v, %v", r, err)
	}
	if _, err := s.CampaignFinishMany(ctx, make([]store.CampaignFinishParams, store.MaxBatch+1)); err == nil {
		t.Fatal("a batch past store.MaxBatch was taken")
	}
}

func testCampaignAdvance(t *testing.T, open Opener) {
	s, id := freshStarted(t, open)
	ctx := context.Background()
	r := claimCommand(t, s, id)
	// Not terminal yet: nothing moves.
	next := commandFixture("cx-1", 1)
	if ok, err := s.CampaignAdvance(ctx, store.CampaignAdvanceParams{CommandID: id, Revision: r.Command.Revision, Next: &next, Now: T0}); ok || err != nil {
		t.Fatalf("advance on a running command = %v, %v", ok, err)
	}
	c, err := s.CampaignFinish(ctx, store.CampaignFinishParams{CommandID: id, Token: r.Command.Version, Now: T0, Status: store.CommandSucceeded})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.CampaignAdvance(ctx, store.CampaignAdvanceParams{CommandID: id, Revision: c.Revision - 1, Next: &next, Now: T0}); ok {
		t.Fatal("a stale revision advanced the chain")
	}
	adv := raceWins(t, 5, func(int) (bool, error) {
		return s.CampaignAdvance(ctx, store.CampaignAdvanceParams{CommandID: id, Revision: c.Revision, Next: &next, Now: T0,
			Outbox: []store.OutboxMessage{{MessageID: next.CommandID + ":cmd", Destination: "campaign-commands", Body: []byte(`{}`)}}})
	})
	if adv != 1 {
		t.Fatalf("the chain advanced %d times, want 1", adv)
	}
	cmds, _ := s.CampaignCommandsOf(ctx, "cx-1")
	e, _ := s.CampaignExecutionGet(ctx, "cx-1")
	if len(cmds) != 2 || e.CurrentIndex != 1 || e.Status != store.ExecutionRunning {
		t.Fatalf("after advance: %d commands, execution %+v", len(cmds), e)
	}
	r2, _ := s.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: next.CommandID, Now: T0, Lease: time.Minute, FreezeParams: `{}`})
	c2, _ := s.CampaignFinish(ctx, store.CampaignFinishParams{CommandID: next.CommandID, Token: r2.Command.Version, Now: T0, Status: store.CommandFailed, Error: "no"})
	if ok, _ := s.CampaignAdvance(ctx, store.CampaignAdvanceParams{CommandID: next.CommandID, Revision: c2.Revision, FinalStatus: store.ExecutionCompleted, Now: T0}); !ok {
		t.Fatal("the last step did not complete the execution")
	}
	if e, _ := s.CampaignExecutionGet(ctx, "cx-1"); e.Status != store.ExecutionCompleted {
		t.Fatalf("execution = %+v", e)
	}
	if ok, _ := s.CampaignAdvance(ctx, store.CampaignAdvanceParams{CommandID: id, Revision: c.Revision, Next: &next, Now: T0}); ok {
		t.Fatal("a duplicate of an old result advanced a finished chain")
	}
}

// CampaignAdvanceMany moves the chains of a batch of results in one transaction, in order:
// each result as CampaignAdvance would, a later one seeing what an earlier one moved (a
// duplicate in the same batch moves nothing); a result that fails leaves nothing of the
// batch written; past store.MaxBatch the batch is refused.
func testCampaignAdvanceMany(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	finished := func(n int) store.CampaignCommand {
		p := startFixture(n)
		if _, err := s.CampaignStart(ctx, p); err != nil {
			t.Fatal(err)
		}
		r, err := s.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: p.Command.CommandID, Now: T0, Lease: time.Minute, FreezeParams: `{}`})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.CampaignFinish(ctx, store.CampaignFinishParams{CommandID: p.Command.CommandID, Token: r.Command.Version, Now: T0, Status: store.CommandSucceeded})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b, c := finished(1), finished(2), finished(3)
	nextA, nextB := commandFixture("cx-1", 1), commandFixture("cx-2", 1)
	advance := func(cmd store.CampaignCommand, next *store.CampaignCommand) store.CampaignAdvanceParams {
		p := store.CampaignAdvanceParams{CommandID: cmd.CommandID, Revision: cmd.Revision, FinalStatus: store.ExecutionCompleted, Now: T0}
		if next != nil {
			p.Next = next
			p.Outbox = []store.OutboxMessage{{MessageID: next.CommandID + ":cmd", Destination: "campaign-commands", Body: []byte(`{}`)}}
		}
		return p
	}
	stale := advance(c, nil)
	stale.Revision--
	// A failing result (a next command of another execution) in the batch: nothing written.
	bad := advance(b, &nextA)
	if _, err := s.CampaignAdvanceMany(ctx, []store.CampaignAdvanceParams{advance(a, &nextA), bad}); err == nil {
		t.Fatal("a batch with a failing result was written")
	}
	if e, _ := s.CampaignExecutionGet(ctx, "cx-1"); e.CurrentIndex != 0 || e.Status != store.ExecutionRunning {
		t.Fatalf("the failed batch moved cx-1: %+v", e)
	}
	got, err := s.CampaignAdvanceMany(ctx, []store.CampaignAdvanceParams{advance(a, &nextA), stale, advance(a, &nextA), advance(b, &nextB), advance(c, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, false, true, true}; !slices.Equal(got, want) {
		t.Fatalf("advanced %v, want %v", got, want)
	}
	for exe, want := range map[string]store.CampaignExecution{"cx-1": {CurrentIndex: 1, Status: store.ExecutionRunning},
		"cx-2": {CurrentIndex: 1, Status: store.ExecutionRunning}, "cx-3": {CurrentIndex: 0, Status: store.ExecutionCompleted}} {
		e, err := s.CampaignExecutionGet(ctx, exe)
		if err != nil || e.CurrentIndex != want.CurrentIndex || e.Status != want.Status {
			t.Fatalf("%s = %+v (%v), want index %d, %s", exe, e, err, want.CurrentIndex, want.Status)
		}
	}
	if cmds, _ := s.CampaignCommandsOf(ctx, "cx-1"); len(cmds) != 2 {
		t.Fatalf("cx-1 has %d commands, want 2 (the duplicate inserted none)", len(cmds))
	}
	if _, err := s.CampaignAdvanceMany(ctx, make([]store.CampaignAdvanceParams, store.MaxBatch+1)); err == nil {
		t.Fatal("a batch past store.MaxBatch was taken")
	}
}

func testCampaignResolve(t *testing.T, open Opener) {
	s, id := freshStarted(t, open)
	ctx := context.Background()
	r := claimCommand(t, s, id)
	c, err := s.CampaignFinish(ctx, store.CampaignFinishParams{CommandID: id, Token: r.Command.Version, Now: T0, Status: store.CommandUnknown, Error: "timeout"})
	if err != nil {
		t.Fatal(err)
	}
	if due, _ := s.CampaignClaimDue(ctx, store.CampaignClaimDueParams{Now: T0.Add(time.Hour), Lease: time.Minute, Limit: 10}); len(due) != 0 {
		t.Fatal("an UNKNOWN awaiting a person was claimed by the sweep")
	}
	if w, err := s.CampaignNextWakeUp(ctx); err != nil || w != nil {
		t.Fatalf("wake-up with only a manual UNKNOWN: %v, %v", w, err)
	}
	l, err := s.CampaignListUnknown(ctx, "bu-1", "", 0, 10)
	if err != nil || len(l) != 1 {
		t.Fatalf("queue = %+v, %v", l, err)
	}
	if l, _ := s.CampaignListUnknown(ctx, "bu-2", "", 0, 10); len(l) != 0 {
		t.Fatal("another unit sees the queue")
	}
	base := store.CampaignResolveParams{CommandID: id, BusinessUnitID: "bu-1", ExpectedVersion: c.Version, Status: store.CommandSucceeded, Operator: "ops", Reason: "provider confirmed", Now: T0}
	other := base
	other.BusinessUnitID = "bu-2"
	if _, err := s.CampaignResolve(ctx, other); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("resolve in another unit = %v", err)
	}
	stale := base
	stale.ExpectedVersion--
	if _, err := s.CampaignResolve(ctx, stale); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale resolve = %v", err)
	}
	got, err := s.CampaignResolve(ctx, base)
	if err != nil || got.Status != store.CommandSucceeded || got.ResolvedBy != "ops" {
		t.Fatalf("resolve = %+v, %v", got, err)
	}
	if _, err := s.CampaignResolve(ctx, base); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second resolve = %v", err)
	}
}

func testCampaignProjection(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	f := func(cmd string, rev int64, st store.CommandStatus, day string, at time.Time) store.CampaignActionOutcomeEvent {
		return store.CampaignActionOutcomeEvent{EventID: store.FactEventID(cmd, rev), CommandID: cmd, BusinessUnitID: "bu-1", CampaignID: "c1",
			LocalDate: day, Status: st, Revision: rev, OccurredOn: at}
	}
	facts := []store.CampaignActionOutcomeEvent{
		f("a", 1, store.CommandQueued, "2026-10-01", T0), f("a", 2, store.CommandRunning, "2026-10-01", T0.Add(time.Second)),
		f("a", 3, store.CommandSucceeded, "2026-10-01", T0.Add(2*time.Second)), f("b", 1, store.CommandQueued, "2026-10-02", T0.Add(3*time.Second)),
	}
	if _, err := s.CampaignFactApply(ctx, facts, T0); err != nil {
		t.Fatal(err)
	}
	// A replay, in reverse order, changes nothing.
	rev := []store.CampaignActionOutcomeEvent{facts[3], facts[2], facts[1], facts[0]}
	res, err := s.CampaignFactApply(ctx, rev, T0)
	if err != nil || res.Applied != 0 || res.Stale != 4 {
		t.Fatalf("replay = %+v, %v", res, err)
	}
	got, err := s.CampaignCountsByDay(ctx, store.CampaignCountsParams{BusinessUnitID: "bu-1", CampaignID: "c1", From: "2026-10-01", To: "2026-10-31"})
	if err != nil || len(got.Days) != 2 || got.Days[0].ByStatus["SUCCEEDED"] != 1 || len(got.Days[0].ByStatus) != 1 || got.Days[1].ByStatus["QUEUED"] != 1 {
		t.Fatalf("counts = %+v, %v", got, err)
	}
	if got.FreshTo == nil || !got.FreshTo.Equal(T0.Add(3*time.Second)) {
		t.Fatalf("freshTo = %v", got.FreshTo)
	}
}

// testOutboxClaimAfter: OutboxClaimParams.AfterID narrows a claim to the rows past it and
// changes nothing else (rows at or below it stay claimable by a claim without it), and
// OutboxBacklogReader counts every unpublished row, leased or not.
func testOutboxClaimAfter(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	for i := range 10 {
		if _, err := s.CampaignStart(ctx, startFixture(i)); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 100})
	if err != nil || len(all) < 10 {
		t.Fatalf("claim = %d rows, %v", len(all), err)
	}
	if err := s.OutboxRelease(ctx, nil, all[0].ClaimToken); err != nil {
		t.Fatal(err)
	}
	half := all[len(all)/2-1].ID
	past, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 100, AfterID: half})
	if err != nil || len(past) != len(all)-len(all)/2 || past[0].ID <= half {
		t.Fatalf("claim after %d = %d rows (first %+v), %v; want the %d rows past it", half, len(past), past, err, len(all)-len(all)/2)
	}
	if none, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 100, AfterID: all[len(all)-1].ID}); err != nil || len(none) != 0 {
		t.Fatalf("claim after the last row = %d rows, %v", len(none), err)
	}
	// The hint leaves the rows below it to a claim without it.
	rest, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 100})
	if err != nil || len(rest) != len(all)/2 || rest[0].ID != all[0].ID || rest[len(rest)-1].ID != half {
		t.Fatalf("claim without the hint = %d rows, %v; want the %d rows up to %d", len(rest), err, len(all)/2, half)
	}
	if b, ok := s.(store.OutboxBacklogReader); ok {
		if n, err := b.OutboxBacklog(ctx); err != nil || n != len(all) {
			t.Fatalf("backlog = %d, %v; want %d (leased rows are unpublished)", n, err, len(all))
		}
		if err := s.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: []int64{all[0].ID, all[1].ID}, Now: T0}); err != nil {
			t.Fatal(err)
		}
		if n, err := b.OutboxBacklog(ctx); err != nil || n != len(all)-2 {
			t.Fatalf("backlog after two marks = %d, %v; want %d", n, err, len(all)-2)
		}
	}
}

// testOutboxClaimSkip: OutboxClaimParams.SkipDestinations leaves the rows of those
// destinations out of the claim, and its lease does not hold them, though they lie inside its
// Id range: the next claim that does not skip them takes them, oldest first, under their own
// MessageId, while the first claim's rows stay held. A bad name is refused.
func testOutboxClaimSkip(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	var events []store.GatewayEvent
	for i := range 6 {
		events = append(events, gatewayEvent("/app", fmt.Sprintf("sk%d", i), "tracking", "slow"))
	}
	if _, err := s.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: T0, Events: events}); err != nil {
		t.Fatal(err)
	}
	first, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 100, SkipDestinations: []string{"slow", "other"}})
	if err != nil || len(first) != 6 {
		t.Fatalf("claim skipping slow = %d rows, %v; want the 6 tracking rows", len(first), err)
	}
	for _, m := range first {
		if m.Destination != "tracking" {
			t.Fatalf("claim skipping slow took %+v", m)
		}
	}
	// The first claim's lease spans every slow row (tracking and slow alternate), yet does
	// not hold them.
	rest, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 100})
	if err != nil || len(rest) != 6 {
		t.Fatalf("claim after = %d rows, %v; want the 6 slow rows", len(rest), err)
	}
	for i, m := range rest {
		if m.Destination != "slow" || m.MessageID != fmt.Sprintf("sk%d:slow", i) || m.ID < first[0].ID || m.ID > first[len(first)-1].ID+1 {
			t.Fatalf("row %d of the claim after = %+v; want sk%d:slow, in the first claim's range", i, m, i)
		}
	}
	if again, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 100}); err != nil || len(again) != 0 {
		t.Fatalf("a third claim = %d rows, %v; want none (both leases hold theirs)", len(again), err)
	}
	for _, bad := range [][]string{{""}, {"a|b"}, make([]string, store.MaxSkipDestinations+1)} {
		if _, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 100, SkipDestinations: bad}); err == nil || !strings.Contains(err.Error(), "SkipDestinations") {
			t.Fatalf("skip %q: %v; want an error naming SkipDestinations", bad, err)
		}
	}
}

// testOutboxClaimDestination: OutboxClaimParams.Destination claims only that destination's
// rows, oldest first, from past AfterID and below BeforeID; its lease holds only that
// destination's rows, so a claim of the others, and a claim leaving that destination out
// under a lease that does not list it, take the other rows inside its Id range, while
// another claim of the same destination finds its rows held. A claim leaving a destination
// out stops below BeforeID. A bad name, or Destination with SkipDestinations, is refused.
func testOutboxClaimDestination(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	var events []store.GatewayEvent
	for i := range 6 {
		events = append(events, gatewayEvent("/app", fmt.Sprintf("cd%d", i), "herd", "facts"))
	}
	if _, err := s.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: T0, Events: events}); err != nil {
		t.Fatal(err)
	}
	all, err := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
	if err != nil || len(all) != 12 {
		t.Fatalf("outbox: %d rows, %v; want 12", len(all), err)
	}
	ids := func(msgs []store.OutboxMessage) string {
		var out []string
		for _, m := range msgs {
			out = append(out, m.MessageID)
		}
		return strings.Join(out, ",")
	}
	// facts, past the first row and below the fifth fact's row (herd and facts alternate).
	facts, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 3, AfterID: all[0].ID, BeforeID: all[9].ID, Destination: "facts"})
	if err != nil || ids(facts) != "cd0:facts,cd1:facts,cd2:facts" {
		t.Fatalf("claim of facts = %s, %v; want cd0..cd2 facts", ids(facts), err)
	}
	// Its lease spans herd rows cd1..cd2 and holds none of them; nor the facts row it did
	// not reach (cd3, past its last row, is outside its range).
	herd, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 100, SkipDestinations: []string{"facts"}, BeforeID: all[10].ID})
	if err != nil || ids(herd) != "cd0:herd,cd1:herd,cd2:herd,cd3:herd,cd4:herd" {
		t.Fatalf("claim leaving facts out, below cd5:herd = %s, %v; want cd0..cd4 herd", ids(herd), err)
	}
	again, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 100, Destination: "facts"})
	if err != nil || ids(again) != "cd3:facts,cd4:facts,cd5:facts" {
		t.Fatalf("a second claim of facts = %s, %v; want cd3..cd5 facts (the first claim's held)", ids(again), err)
	}
	rest, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 100})
	if err != nil || ids(rest) != "cd5:herd" {
		t.Fatalf("a last claim = %s, %v; want cd5:herd only", ids(rest), err)
	}
	for _, bad := range []store.OutboxClaimParams{{Destination: "a|b"}, {Destination: strings.Repeat("d", 121)}, {Destination: "facts", SkipDestinations: []string{"herd"}}} {
		bad.Now, bad.Lease, bad.Limit = T0, time.Minute, 100
		if _, err := s.OutboxClaim(ctx, bad); err == nil || !strings.Contains(err.Error(), "Destination") {
			t.Fatalf("claim %+v: %v; want an error naming Destination", bad, err)
		}
	}
}

// testOutboxClaimSessionHold (issue 39 item 4, order per session): a row set to retry
// (OutboxRetryLater) holds back the later rows of its session (same Destination and
// SessionID) until its RetryAt comes: a claim before then takes the other sessions' rows and
// the rows without a session, and none of that session's; one after it takes the retried row
// first, then the rest, in Id order, under their own MessageIds.
func testOutboxClaimSessionHold(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	ev := func(id, customer string) store.GatewayEvent {
		e := gatewayEvent("/app", id, "events")
		e.CustomerID = customer
		e.Outbox[0].SessionID = customer
		return e
	}
	events := []store.GatewayEvent{ev("h1", "A"), ev("h2", "B"), ev("h3", "A"), ev("h4", ""), ev("h5", "B")}
	if _, err := s.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: T0, Events: events}); err != nil {
		t.Fatal(err)
	}
	first, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 1})
	if err != nil || len(first) != 1 || first[0].MessageID != "h1:events" {
		t.Fatalf("first claim = %+v, %v; want h1", first, err)
	}
	retryAt := T0.Add(time.Minute)
	if err := s.OutboxRetryLater(ctx, first[0].ID, first[0].ClaimToken, retryAt); err != nil {
		t.Fatal(err)
	}
	if err := s.OutboxRelease(ctx, nil, first[0].ClaimToken); err != nil {
		t.Fatal(err)
	}
	ids := func(msgs []store.OutboxMessage) string {
		var out []string
		for _, m := range msgs {
			out = append(out, strings.TrimSuffix(m.MessageID, ":events"))
		}
		return strings.Join(out, ",")
	}
	before, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0.Add(time.Second), Lease: time.Minute, Limit: 100})
	if err != nil || ids(before) != "h2,h4,h5" {
		t.Fatalf("claim before h1's RetryAt = %q, %v; want h2,h4,h5 (A's h3 held behind h1)", ids(before), err)
	}
	// h3 lies inside that claim's Id range: its lease holds it until given back (the relay
	// does once its rows are marked), then h3 goes behind h1.
	if again, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: retryAt, Lease: time.Minute, Limit: 100}); err != nil || ids(again) != "h1" {
		t.Fatalf("claim at h1's RetryAt under the live lease = %q, %v; want h1 (h3 in the lease's range)", ids(again), err)
	} else if err := s.OutboxRetryLater(ctx, again[0].ID, again[0].ClaimToken, retryAt.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	var marked []int64
	for _, m := range before {
		marked = append(marked, m.ID)
	}
	if err := s.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: marked, Now: retryAt}); err != nil {
		t.Fatal(err)
	}
	if err := s.OutboxRelease(ctx, nil, before[0].ClaimToken); err != nil {
		t.Fatal(err)
	}
	if held, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: retryAt, Lease: time.Minute, Limit: 100}); err != nil || len(held) != 0 {
		t.Fatalf("claim while h1 waits for its second retry = %q, %v; want none (h3 held behind h1)", ids(held), err)
	}
	retryAt = retryAt.Add(time.Minute)
	after, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: retryAt, Lease: time.Minute, Limit: 100})
	if err != nil || ids(after) != "h1,h3" {
		t.Fatalf("claim at h1's RetryAt = %q, %v; want h1,h3 in order", ids(after), err)
	}
}

func testOutboxLease(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	for i := range 20 {
		p := startFixture(i)
		if _, err := s.CampaignStart(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	// Two relays claiming at once get disjoint batches that cover every row.
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int64]int{}
	for range 4 {
		wg.Go(func() {
			msgs, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0, Lease: time.Minute, Limit: 7})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, m := range msgs {
				seen[m.ID]++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("row %d claimed by %d relays", id, n)
		}
	}
	if len(seen) != 20 {
		t.Fatalf("%d rows claimed, want 20", len(seen))
	}
	if again, _ := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0.Add(30 * time.Second), Lease: time.Minute, Limit: 100}); len(again) != 0 {
		t.Fatalf("%d rows claimed under live leases", len(again))
	}
	// After the lease: claimable again (a relay died); RetryAt holds a row back.
	msgs, _ := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0.Add(time.Minute), Lease: time.Minute, Limit: 100})
	if len(msgs) != 20 {
		t.Fatalf("%d rows reclaimed after the lease, want 20", len(msgs))
	}
	if err := s.OutboxRetryLater(ctx, msgs[0].ID, "another-token", T0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.OutboxRetryLater(ctx, msgs[0].ID, msgs[0].ClaimToken, T0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, m := range msgs[1:] {
		ids = append(ids, m.ID)
	}
	if err := s.OutboxRelease(ctx, ids[:9], msgs[1].ClaimToken); err != nil {
		t.Fatal(err)
	}
	if err := s.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: ids[9:], Now: T0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	now := T0.Add(time.Minute)
	got, _ := s.OutboxClaim(ctx, store.OutboxClaimParams{Now: now, Lease: time.Minute, Limit: 100})
	if len(got) != 9 {
		t.Fatalf("%d released rows claimable, want 9", len(got))
	}
	got, _ = s.OutboxClaim(ctx, store.OutboxClaimParams{Now: T0.Add(time.Hour), Lease: time.Minute, Limit: 100})
	if len(got) != 10 || got[0].ID != msgs[0].ID || got[0].Attempts != 1 {
		t.Fatalf("after RetryAt: %d rows, first %+v", len(got), got[0])
	}
	m, err := s.CampaignMetricsRead(ctx, "", T0.Add(time.Hour))
	if err != nil || m.OutboxUnsent != 10 || m.OutboxOldestOn == nil || m.Waiting != 20 {
		t.Fatalf("metrics = %+v, %v", m, err)
	}
	// Scoped to a business unit: its commands only; the outbox gauges stay the platform's.
	if mu, err := s.CampaignMetricsRead(ctx, "bu-1", T0.Add(time.Hour)); err != nil || mu.Waiting != 20 || mu.OutboxUnsent != 10 {
		t.Fatalf("bu-1 metrics = %+v, %v", mu, err)
	}
	if mo, err := s.CampaignMetricsRead(ctx, "bu-other", T0.Add(time.Hour)); err != nil || mo.Waiting != 0 || mo.Unknown != 0 || mo.PastLease != 0 ||
		mo.OutboxUnsent != 10 || mo.OutboxOldestOn == nil || !mo.OutboxOldestOn.Equal(*m.OutboxOldestOn) {
		t.Fatalf("another unit's metrics = %+v, %v", mo, err)
	}
	// Purge: published rows before the window go; unpublished never; dedupe keys only before
	// their own window.
	if err := s.EventMarkProcessed(ctx, "/src", "old", T0); err != nil {
		t.Fatal(err)
	}
	if err := s.EventMarkProcessed(ctx, "/src", "new", T0.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	res, err := s.OutboxPurge(ctx, store.OutboxPurgeParams{PublishedBefore: T0.Add(2 * time.Minute), ProcessedBefore: T0.Add(time.Hour), Limit: 1000})
	if err != nil || res.Outbox != 10 || res.ProcessedEvents != 1 {
		t.Fatalf("purge = %+v, %v", res, err)
	}
	if m, _ := s.CampaignMetricsRead(ctx, "", T0); m.OutboxUnsent != 10 {
		t.Fatalf("purge removed unpublished rows: %+v", m)
	}
	if done, _ := s.EventProcessed(ctx, "/src", "new"); !done {
		t.Fatal("a dedupe key inside the window was purged")
	}
}

// testCampaignProjectionConcurrent: projectors applying the first facts of the same commands
// at once (two instances of the fact consumer, each with a batch naming new commands) all
// succeed, and each command ends at its highest revision: none fails on the projection's
// primary key because both read "no row" and inserted.
func testCampaignProjectionConcurrent(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	const workers, commands = 6, 5
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var facts []store.CampaignActionOutcomeEvent
			for c := 0; c < commands; c++ {
				cmd, rev := fmt.Sprintf("cmd-%d", c), int64(w+1)
				facts = append(facts, store.CampaignActionOutcomeEvent{EventID: store.FactEventID(cmd, rev), CommandID: cmd, BusinessUnitID: "bu-1",
					CampaignID: "c1", LocalDate: "2026-10-01", Status: store.CommandRunning, Revision: rev, OccurredOn: T0})
			}
			if _, err := s.CampaignFactApply(ctx, facts, T0); err != nil {
				t.Errorf("worker %d: %v", w, err)
			}
		}(w)
	}
	wg.Wait()
	last := store.CampaignActionOutcomeEvent{EventID: "x", CommandID: "cmd-0", BusinessUnitID: "bu-1", CampaignID: "c1",
		LocalDate: "2026-10-01", Status: store.CommandRunning, Revision: workers, OccurredOn: T0}
	if res, err := s.CampaignFactApply(ctx, []store.CampaignActionOutcomeEvent{last}, T0); err != nil || res.Stale != 1 {
		t.Fatalf("revision %d after the concurrent applies: %+v %v (want stale: the highest revision won)", workers, res, err)
	}
	got, err := s.CampaignCountsByDay(ctx, store.CampaignCountsParams{BusinessUnitID: "bu-1", CampaignID: "c1", From: "2026-10-01", To: "2026-10-01"})
	if err != nil || len(got.Days) != 1 || got.Days[0].ByStatus["RUNNING"] != commands {
		t.Fatalf("counts = %+v, %v", got, err)
	}
}

// testCommandThroughput: commands that reached SUCCEEDED, FAILED or UNKNOWN count in the
// minute of their last change, per status, within the window and the scope; a running one
// does not count.
func testCommandThroughput(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	finish := func(n int, st store.CommandStatus, at time.Time) {
		t.Helper()
		p := startFixture(n)
		if n == 4 {
			p.Execution.BusinessUnitID, p.Command.BusinessUnitID = "bu-2", "bu-2"
		}
		if _, err := s.CampaignStart(ctx, p); err != nil {
			t.Fatal(err)
		}
		r, err := s.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: p.Command.CommandID, Now: at, Lease: time.Minute, FreezeParams: `{}`})
		if err != nil || !r.Claimed {
			t.Fatal(r, err)
		}
		if st == store.CommandRunning {
			return
		}
		if _, err := s.CampaignFinish(ctx, store.CampaignFinishParams{CommandID: p.Command.CommandID, Token: r.Command.Version, Now: at, Status: st}); err != nil {
			t.Fatal(err)
		}
	}
	finish(1, store.CommandSucceeded, T0.Add(10*time.Second))
	finish(2, store.CommandSucceeded, T0.Add(50*time.Second))
	finish(3, store.CommandFailed, T0.Add(70*time.Second))
	finish(4, store.CommandSucceeded, T0.Add(20*time.Second)) // bu-2
	finish(5, store.CommandRunning, T0.Add(30*time.Second))
	finish(6, store.CommandSucceeded, T0.Add(3*time.Minute)) // past the window
	bs, err := s.SupportCommandThroughput(ctx, store.SupportThroughputParams{Since: T0, Until: T0.Add(2 * time.Minute), Scope: automation.BusinessUnits("bu-1")})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.CommandThroughputBucket{{Minute: T0, Status: store.CommandSucceeded, Count: 2}, {Minute: T0.Add(time.Minute), Status: store.CommandFailed, Count: 1}}
	if len(bs) != len(want) {
		t.Fatalf("buckets %+v, want %+v", bs, want)
	}
	for i := range want {
		if !bs[i].Minute.Equal(want[i].Minute) || bs[i].Status != want[i].Status || bs[i].Count != want[i].Count {
			t.Fatalf("bucket %d: %+v, want %+v", i, bs[i], want[i])
		}
	}
	all, err := s.SupportCommandThroughput(ctx, store.SupportThroughputParams{Since: T0, Until: T0.Add(2 * time.Minute), Scope: automation.AllBusinessUnits()})
	if err != nil || len(all) != 2 || all[0].Count != 3 {
		t.Fatalf("every unit: %+v %v", all, err)
	}
	if _, err := s.SupportCommandThroughput(ctx, store.SupportThroughputParams{Since: T0, Until: T0.Add(25 * time.Hour)}); err == nil {
		t.Fatal("an unbounded window was answered")
	}
}

// testCampaignExecutionFind: the console's filters (status, recipient) and the recipient's
// executions across campaigns, newest first, scoped to the business unit.
func testCampaignExecutionFind(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	start := func(n int, bu, campaignID, recipient string) {
		p := startFixture(n)
		p.Execution.BusinessUnitID, p.Execution.CampaignID, p.Execution.RecipientID = bu, campaignID, recipient
		p.Command.BusinessUnitID, p.Command.CampaignID = bu, campaignID
		if _, err := s.CampaignStart(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	start(1, "bu-1", "c1", "ann")
	start(2, "bu-1", "c1", "bob")
	start(3, "bu-1", "c2", "ann")
	start(4, "bu-2", "c1", "ann")
	start(5, "bu-1", "c1", "ann")
	ids := func(es []store.CampaignExecution) string {
		var out []string
		for _, e := range es {
			out = append(out, e.ExecutionID)
		}
		return fmt.Sprint(out)
	}
	find := func(p store.CampaignExecutionFindParams) string {
		t.Helper()
		l, err := s.CampaignExecutionFind(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return ids(l)
	}
	if got := find(store.CampaignExecutionFindParams{BusinessUnitID: "bu-1", CampaignID: "c1", Limit: 10}); got != "[cx-5 cx-2 cx-1]" {
		t.Fatalf("no filter = %s", got)
	}
	if got := find(store.CampaignExecutionFindParams{BusinessUnitID: "bu-1", CampaignID: "c1", RecipientID: "ann", Limit: 10}); got != "[cx-5 cx-1]" {
		t.Fatalf("ann = %s", got)
	}
	if got := find(store.CampaignExecutionFindParams{BusinessUnitID: "bu-1", CampaignID: "c1", RecipientID: "ann", Limit: 1}); got != "[cx-5]" {
		t.Fatalf("ann, one = %s", got)
	}
	if got := find(store.CampaignExecutionFindParams{BusinessUnitID: "bu-1", CampaignID: "c1", Status: store.ExecutionRunning, Limit: 10}); got != "[cx-5 cx-2 cx-1]" {
		t.Fatalf("RUNNING = %s", got)
	}
	if got := find(store.CampaignExecutionFindParams{BusinessUnitID: "bu-1", CampaignID: "c1", Status: store.ExecutionCompleted, Limit: 10}); got != "[]" {
		t.Fatalf("COMPLETED = %s", got)
	}
	first, err := s.CampaignExecutionListByRecipient(ctx, "bu-1", "ann", 0, 2)
	if err != nil || ids(first) != "[cx-5 cx-3]" {
		t.Fatalf("ann's executions = %s, %v", ids(first), err)
	}
	if l, _ := s.CampaignExecutionListByRecipient(ctx, "bu-1", "ann", first[1].ID, 2); ids(l) != "[cx-1]" {
		t.Fatalf("ann's older executions = %s", ids(l))
	}
	if l, _ := s.CampaignExecutionListByRecipient(ctx, "bu-2", "ann", 0, 10); ids(l) != "[cx-4]" {
		t.Fatalf("ann in bu-2 = %s", ids(l))
	}
	if _, err := s.CampaignExecutionFind(ctx, store.CampaignExecutionFindParams{BusinessUnitID: "bu-1", CampaignID: "c1"}); err == nil {
		t.Fatal("limit 0 was accepted")
	}
}

// testCampaignAudit: a save with an Audit writes it with the statuses and versions before
// and after; a refused save (stale version) writes none.
func testCampaignAudit(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	zero := int64(0)
	c, err := s.CampaignSave(ctx, store.CampaignSaveParams{Campaign: campaignFixture("bu-1", "c1"), ExpectedVersion: &zero, Now: T0})
	if err != nil {
		t.Fatal(err)
	}
	paused := c
	paused.Status = store.CampaignPaused
	stale := c.Version + 1
	if _, err := s.CampaignSave(ctx, store.CampaignSaveParams{Campaign: paused, ExpectedVersion: &stale, Now: T0,
		Audit: &store.CampaignAudit{Action: "PAUSE", Operator: "jane", Reason: "provider outage"}}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale = %v", err)
	}
	if l, _ := s.CampaignAuditList(ctx, "bu-1", "c1", 10); len(l) != 0 {
		t.Fatalf("a refused save was audited: %+v", l)
	}
	if _, err := s.CampaignSave(ctx, store.CampaignSaveParams{Campaign: paused, ExpectedVersion: &c.Version, Now: T0.Add(time.Minute),
		Audit: &store.CampaignAudit{Action: "PAUSE", Operator: "jane", Reason: "provider outage"}}); err != nil {
		t.Fatal(err)
	}
	l, err := s.CampaignAuditList(ctx, "bu-1", "c1", 10)
	if err != nil || len(l) != 1 {
		t.Fatalf("audit = %+v, %v", l, err)
	}
	a := l[0]
	if a.Action != "PAUSE" || a.StatusBefore != store.CampaignActive || a.StatusAfter != store.CampaignPaused || a.VersionBefore != 1 || a.VersionAfter != 2 ||
		a.Operator != "jane" || a.Reason != "provider outage" || !a.CreatedOn.Equal(T0.Add(time.Minute)) || a.BusinessUnitID != "bu-1" || a.CampaignID != "c1" {
		t.Fatalf("audit = %+v", a)
	}
	if l, _ := s.CampaignAuditList(ctx, "bu-2", "c1", 10); len(l) != 0 {
		t.Fatalf("another unit's audit: %+v", l)
	}
}

// testCampaignFirstClaimKept: the command claim keeps the command's first claim in
// FirstClaimedOn as store.FirstClaim says (issue 38, migration 0071), by id and in the due
// sweep: the first claim's Now; kept by a takeover in doubt and a retry; moved to a later
// claim's Now only when every earlier claim ended in a wait (AttemptCount back to 0).
func testCampaignFirstClaimKept(t *testing.T, open Opener) {
	s, id := freshStarted(t, open)
	ctx := context.Background()
	want := func(what string, c store.CampaignCommand, at time.Time) {
		t.Helper()
		if c.FirstClaimedOn == nil || !c.FirstClaimedOn.Equal(at) {
			t.Fatalf("%s: FirstClaimedOn %v, want %v (%+v)", what, c.FirstClaimedOn, at, c)
		}
		stored, err := s.CampaignCommandGet(ctx, id)
		if err != nil || stored.FirstClaimedOn == nil || !stored.FirstClaimedOn.Equal(at) {
			t.Fatalf("%s: stored FirstClaimedOn %v, want %v (%v)", what, stored.FirstClaimedOn, at, err)
		}
	}
	if c, _ := s.CampaignCommandGet(ctx, id); c.FirstClaimedOn != nil {
		t.Fatalf("a command never claimed has FirstClaimedOn %v", c.FirstClaimedOn)
	}
	finish := func(r store.CampaignClaimResult, p store.CampaignFinishParams) {
		t.Helper()
		p.CommandID, p.Token = id, r.Command.Version
		if _, err := s.CampaignFinish(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	claimAt := func(now time.Time) store.CampaignClaimResult {
		t.Helper()
		r, err := s.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: id, Now: now, Lease: time.Minute, FreezeParams: `{}`})
		if err != nil || !r.Claimed {
			t.Fatal(r, err)
		}
		return r
	}
	// A claim that ends in a wait counts for nothing.
	r := claimAt(T0)
	want("claim before the wait", r.Command, T0)
	until := T0.Add(8 * time.Hour)
	finish(r, store.CampaignFinishParams{Status: store.CommandQueued, NextAttemptOn: &until, Wait: true, Now: T0, Error: "quiet hours"})
	t1 := until.Add(time.Second)
	r = claimAt(t1)
	if r.Command.AttemptCount != 1 {
		t.Fatalf("claim after the wait: %+v", r.Command)
	}
	want("claim after a wait", r.Command, t1)
	r = claimAt(t1.Add(time.Minute))
	if !r.InDoubt {
		t.Fatalf("takeover: %+v", r)
	}
	want("takeover in doubt", r.Command, t1)
	retry := t1.Add(5 * time.Minute)
	finish(r, store.CampaignFinishParams{Status: store.CommandUnknown, NextAttemptOn: &retry, CountRetry: true, Now: t1.Add(time.Minute), Error: "timeout"})
	due, err := s.CampaignClaimDue(ctx, store.CampaignClaimDueParams{Now: retry, Lease: time.Minute, Limit: 10})
	if err != nil || len(due) != 1 || !due[0].InDoubt {
		t.Fatalf("due = %+v, %v", due, err)
	}
	want("retry claimed by the sweep", due[0].Command, t1)
}
