package campaign_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// countingStarts counts the dispatcher's start transactions; with refuse, every
// CampaignStartMany fails (a store failure in the batch's transaction), and a start for
// refuseRecipient fails alone too.
type countingStarts struct {
	store.CampaignStore
	refuse          bool
	refuseRecipient string
	many, one       int
}

func (s *countingStarts) CampaignStartMany(ctx context.Context, ps []store.CampaignStartParams) ([]store.CampaignStartResult, error) {
	s.many++
	if s.refuse {
		return nil, errors.New("refused")
	}
	return s.CampaignStore.CampaignStartMany(ctx, ps)
}

func (s *countingStarts) CampaignStart(ctx context.Context, p store.CampaignStartParams) (store.CampaignStartResult, error) {
	s.one++
	if s.refuseRecipient != "" && p.Execution.RecipientID == s.refuseRecipient {
		return store.CampaignStartResult{}, errors.New("this start is refused")
	}
	return s.CampaignStore.CampaignStart(ctx, p)
}

// HandleEventBatch (the CampaignDispatch batch trigger) starts what HandleEvent starts, one
// event at a time, in one transaction: three events for two campaigns each, one of them twice
// in the batch and one an unreadable message (permanent; the others still start), give six
// executions, each with its first command and one command message, written by one
// CampaignStartMany and no CampaignStart; the same batch again writes nothing. With a store
// whose batch transaction fails, each event is started alone with the same outcome, and an
// event whose start is refused then fails alone (its batch-mates start).
func TestHandleEventBatch(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(map[bool]string{false: "one transaction", true: "batch refused, one at a time"}[refuse], func(t *testing.T) {
			r := newRig(t, campaign.ProviderConfig{})
			r.save("welcome", threeSteps("sim"), "r1")
			r.save("second", threeSteps("sim"), "r1")
			ctx := context.Background()
			st := &countingStarts{CampaignStore: r.Store, refuse: refuse}
			if refuse {
				st.refuseRecipient = "cust-e3"
			}
			d := &campaign.Dispatcher{Store: st, Clock: r.Clock}
			batch := [][]byte{event("e1", "cust-e1"), event("e2", "cust-e2"), []byte(`{"id":`), event("e1", "cust-e1"), event("e3", "cust-e3")}
			created, errs := d.HandleEventBatch(ctx, batch, nil)
			wantCreated := []int{2, 2, 0, 0, 2}
			if refuse {
				wantCreated[4] = 0
			}
			if !slices.Equal(created, wantCreated) {
				t.Fatalf("created %v, want %v", created, wantCreated)
			}
			for i, err := range errs {
				switch {
				case i == 2:
					if !automation.IsPermanent(err) {
						t.Fatalf("the unreadable event: %v, want permanent", err)
					}
				case i == 4 && refuse:
					if err == nil {
						t.Fatal("the refused start answered nil: its event would be settled without its executions")
					}
				case err != nil:
					t.Fatalf("event %d: %v", i, err)
				}
			}
			if !refuse && (st.many != 1 || st.one != 0) {
				t.Fatalf("start transactions: %d batches and %d alone, want 1 and 0", st.many, st.one)
			}
			if refuse && (st.many != 1 || st.one != 7) {
				t.Fatalf("start transactions: %d batches and %d alone, want 1 refused and 7 alone (e1 twice; e3 stops at its refused first start)", st.many, st.one)
			}
			commands := len(r.Unpublished(topology.CampaignCommandsQueue))
			if want := map[bool]int{false: 6, true: 4}[refuse]; commands != want {
				t.Fatalf("%d command messages, want %d (one per execution created)", commands, want)
			}
			// The same batch again (a redelivery): nothing new.
			st.refuse, st.refuseRecipient = false, ""
			again, errs := d.HandleEventBatch(ctx, batch, nil)
			if refuse {
				if again[4] != 2 {
					t.Fatalf("the redelivered batch created %v, want e3's two executions now", again)
				}
			} else if !slices.Equal(again, []int{0, 0, 0, 0, 0}) {
				t.Fatalf("the redelivered batch created %v, want nothing", again)
			}
			for i, err := range errs {
				if i != 2 && err != nil {
					t.Fatalf("redelivered event %d: %v", i, err)
				}
			}
			for _, id := range []string{"e1", "e2", "e3"} {
				var n int
				if err := r.Store.(interface{ DB() *sql.DB }).DB().QueryRow(`SELECT COUNT(*) FROM CampaignExecution WHERE RecipientId = ?`, "cust-"+id).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != 2 {
					t.Fatalf("cust-%s has %d executions, want 2 (one per campaign, created once)", id, n)
				}
			}
		})
	}
}
