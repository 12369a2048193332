package campaign_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// countingClaims counts the worker's claim transactions. refuse makes every
// CampaignClaimMany fail before it writes; lose makes it commit its claims and then answer an
// error, as a worker that crashed after the batch's claim committed (its commands RUNNING
// under their leases, none called).
type countingClaims struct {
	store.CampaignStore
	refuse, lose bool
	many, one    int
	// The outcomes: refuseFinish makes every CampaignFinishMany fail before it writes.
	mu                    sync.Mutex
	refuseFinish          bool
	finishMany, finishOne int
	finishedInMany        int
}

func (s *countingClaims) CampaignFinishMany(ctx context.Context, ps []store.CampaignFinishParams) ([]store.CampaignFinishResult, error) {
	s.mu.Lock()
	s.finishMany++
	s.finishedInMany += len(ps)
	refuse := s.refuseFinish
	s.mu.Unlock()
	if refuse {
		return nil, errors.New("refused")
	}
	return s.CampaignStore.CampaignFinishMany(ctx, ps)
}

func (s *countingClaims) CampaignFinish(ctx context.Context, p store.CampaignFinishParams) (store.CampaignCommand, error) {
	s.mu.Lock()
	s.finishOne++
	s.mu.Unlock()
	return s.CampaignStore.CampaignFinish(ctx, p)
}

func (s *countingClaims) CampaignClaimMany(ctx context.Context, ps []store.CampaignClaimParams) ([]store.CampaignClaimResult, error) {
	s.many++
	if s.refuse {
		return nil, errors.New("refused")
	}
	r, err := s.CampaignStore.CampaignClaimMany(ctx, ps)
	if err == nil && s.lose {
		return nil, errors.New("the worker died after the batch's claim committed")
	}
	return r, err
}

func (s *countingClaims) CampaignClaim(ctx context.Context, p store.CampaignClaimParams) (store.CampaignClaimResult, error) {
	s.mu.Lock() // the claims alone run side by side (a refused batch's commands, each Run)
	s.one++
	s.mu.Unlock()
	return s.CampaignStore.CampaignClaim(ctx, p)
}

// HandleBatch (the CampaignWorker batch trigger) runs each command of its batch once: three
// commands, one of them twice in the batch, an unreadable message (permanent; the others
// still run) and an unknown command (dropped) are claimed in one CampaignClaimMany, and each
// top-up reaches the provider exactly once; the batch again changes nothing. With a store
// whose batch claim fails, each command is run alone (Run) with the same outcome. With a
// batch claim that committed and was then lost (a crash after it), no command is called
// then; once the leases end the sweep claims them in doubt: a provider that dedupes gets each
// once, a plain one none, each UNKNOWN for a person.
func TestHandleCommandBatch(t *testing.T) {
	for _, tc := range []struct {
		name, provider string
		refuse, lose   bool
	}{
		{name: "one transaction", provider: "sim"},
		{name: "batch refused, one at a time", provider: "sim", refuse: true},
		{name: "claim lost, dedupe provider", provider: "sim", lose: true},
		{name: "claim lost, plain provider", provider: "plain", lose: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, campaign.ProviderConfig{})
			r.topUpOnly("c", tc.provider)
			ctx := context.Background()
			events := []string{"e1", "e2", "e3"}
			cmds := r.fireCommands(t, events)
			st := &countingClaims{CampaignStore: r.Store, refuse: tc.refuse, lose: tc.lose}
			w := *r.Worker
			w.Store = st
			batch := [][]byte{cmds[0], cmds[1], []byte(`{"commandId":`), cmds[0], cmds[2], []byte(`{"commandId":"no-such-command"}`)}
			for i, err := range w.HandleBatch(ctx, batch, nil) {
				switch {
				case i == 2:
					if !automation.IsPermanent(err) {
						t.Fatalf("the unreadable message: %v, want permanent", err)
					}
				case err != nil:
					t.Fatalf("message %d: %v", i, err)
				}
			}
			switch {
			case (tc.refuse || tc.lose) && (st.many != 1 || st.one != 4):
				// lost: the claims alone find the commands leased and claim none
				t.Fatalf("claims: %d batches, %d alone; want the failed batch, then its 4 claims alone", st.many, st.one)
			case !tc.refuse && !tc.lose && (st.many != 1 || st.one != 0):
				t.Fatalf("claims: %d batches, %d alone; want one batch", st.many, st.one)
			}
			sim := r.sims[tc.provider]
			st.lose = false
			if errs := w.HandleBatch(ctx, batch, nil); errs[0] != nil || errs[1] != nil || errs[4] != nil {
				t.Fatalf("the batch again: %v", errs)
			}
			if tc.lose {
				for _, id := range events {
					exe := campaign.ExecutionID("bu-1", "c", "r1", "cust-"+id, appEvent(id))
					if c := r.Commands(exe)[0]; c.Status != store.CommandRunning || sim.Applied(c.EffectKey) != 0 {
						t.Fatalf("%s after the lost claim: %s, applied %d; want RUNNING, never called", id, c.Status, sim.Applied(c.EffectKey))
					}
				}
				r.Settle(5*time.Minute, 40)
			}
			for _, id := range events {
				exe := campaign.ExecutionID("bu-1", "c", "r1", "cust-"+id, appEvent(id))
				c := r.Commands(exe)[0]
				want, applied := store.CommandSucceeded, 1
				if tc.provider == "plain" {
					want, applied = store.CommandUnknown, 0 // in doubt, never resent blind
				}
				if c.Status != want || sim.Applied(c.EffectKey) != applied {
					t.Fatalf("%s: %s, applied %d times; want %s, %d", id, c.Status, sim.Applied(c.EffectKey), want, applied)
				}
			}
		})
	}
}

// TestHandleCommandBatchFinishesTogether: the outcomes (step 7) of a batch's commands are
// written in one store.CampaignFinishMany, not one CampaignFinish each (docs/performance.md,
// "The finishes of a batch together"), and exactly once by command id: a command named twice
// in the batch is finished once, each top-up reaches the provider once and has one result
// message, and the batch again writes no outcome. When the batch's CampaignFinishMany fails,
// each outcome is written alone with the same result.
func TestHandleCommandBatchFinishesTogether(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(fmt.Sprintf("refused=%v", refuse), func(t *testing.T) {
			r := newRig(t, campaign.ProviderConfig{})
			r.topUpOnly("c", "sim")
			ctx := context.Background()
			events := []string{"e1", "e2", "e3"}
			cmds := r.fireCommands(t, events)
			st := &countingClaims{CampaignStore: r.Store, refuseFinish: refuse}
			w := *r.Worker
			w.Store = st
			w.FinishGather = time.Hour // only "every command waits" writes: no timing in the test
			batch := [][]byte{cmds[0], cmds[1], cmds[0], cmds[2]}
			for i, err := range w.HandleBatch(ctx, batch, nil) {
				if err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
			}
			switch {
			case !refuse && (st.finishMany != 1 || st.finishedInMany != 3 || st.finishOne != 0):
				t.Fatalf("outcomes: %d CampaignFinishMany of %d in all, %d alone; want one of 3", st.finishMany, st.finishedInMany, st.finishOne)
			case refuse && (st.finishMany != 1 || st.finishOne != 3):
				t.Fatalf("outcomes: %d CampaignFinishMany, %d alone; want the refused batch, then its 3 alone", st.finishMany, st.finishOne)
			}
			sim := r.sims["sim"]
			for _, id := range events {
				exe := campaign.ExecutionID("bu-1", "c", "r1", "cust-"+id, appEvent(id))
				c := r.Commands(exe)[0]
				if c.Status != store.CommandSucceeded || sim.Applied(c.EffectKey) != 1 {
					t.Fatalf("%s: %s, applied %d times; want SUCCEEDED, once", id, c.Status, sim.Applied(c.EffectKey))
				}
			}
			results := len(r.Unpublished(topology.CampaignResultsQueue))
			if results != 3 {
				t.Fatalf("%d result messages, want one per command (3)", results)
			}
			many, one := st.finishMany, st.finishOne
			if errs := w.HandleBatch(ctx, batch, nil); errs[0] != nil || errs[1] != nil || errs[3] != nil {
				t.Fatalf("the batch again: %v", errs)
			}
			if st.finishMany != many || st.finishOne != one {
				t.Fatalf("the batch again wrote outcomes: %d batches, %d alone", st.finishMany-many, st.finishOne-one)
			}
		})
	}
}

// fireCommands fires one event per id (customer "cust-"+id) and returns the bodies of the
// campaign command messages they wrote to the outbox, one per event, after marking every
// unpublished outbox row published (so nothing else hands them over: the test does).
func (r *rig) fireCommands(t *testing.T, events []string) [][]byte {
	t.Helper()
	for _, id := range events {
		r.Fire(t, id, "cust-"+id)
	}
	var cmds [][]byte
	r.Drain(func(m store.OutboxMessage) {
		if m.Destination == topology.CampaignCommandsQueue {
			cmds = append(cmds, m.Body)
		}
	})
	if len(cmds) != len(events) {
		t.Fatalf("%d command messages, want %d", len(cmds), len(events))
	}
	return cmds
}
