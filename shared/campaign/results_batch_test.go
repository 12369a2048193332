package campaign_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// refusingAdvance is a campaign store whose CampaignAdvanceMany always fails (a store
// failure in the batch's transaction), so the dispatcher moves each result alone.
type refusingAdvance struct {
	store.CampaignStore
	many, one int
}

func (s *refusingAdvance) CampaignAdvanceMany(context.Context, []store.CampaignAdvanceParams) ([]bool, error) {
	s.many++
	return nil, errors.New("refused")
}

func (s *refusingAdvance) CampaignAdvance(ctx context.Context, p store.CampaignAdvanceParams) (bool, error) {
	s.one++
	return s.CampaignStore.CampaignAdvance(ctx, p)
}

// HandleResultBatch (the CampaignResults batch trigger) moves every chain as HandleResult
// does, one result at a time: three executions of three steps run to the end when their
// results come in batches, each batch duplicated and with an unreadable message in it
// (permanent; the others still move). With a store whose batch transaction fails, each
// result is moved alone, with the same outcome.
func TestHandleResultBatch(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(map[bool]string{false: "one transaction", true: "batch refused, one at a time"}[refuse], func(t *testing.T) {
			r := newRig(t, campaign.ProviderConfig{})
			r.save("welcome", threeSteps("sim"), "r1")
			ctx := context.Background()
			var st *refusingAdvance
			d := r.Dispatcher
			if refuse {
				st = &refusingAdvance{CampaignStore: r.Store}
				d = &campaign.Dispatcher{Store: st, Clock: r.Clock}
			}
			for _, id := range []string{"e1", "e2", "e3"} {
				r.Fire(t, id, "cust-"+id)
			}
			for round := 0; round < 20; round++ {
				msgs, err := r.Store.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				if len(msgs) == 0 {
					break
				}
				var results [][]byte
				var ids []int64
				for _, m := range msgs {
					switch m.Destination {
					case topology.CampaignCommandsQueue:
						if err := r.Worker.Handle(ctx, m.Body); err != nil {
							t.Fatalf("worker: %v", err)
						}
					case topology.CampaignResultsQueue:
						results = append(results, m.Body)
					}
					ids = append(ids, m.ID)
				}
				if len(results) > 0 {
					batch := append(append([][]byte{}, results...), []byte(`{"commandId":`))
					batch = append(batch, results...) // redelivered in the same batch
					errs := d.HandleResultBatch(ctx, batch, nil)
					for i, err := range errs {
						switch {
						case i == len(results):
							if !automation.IsPermanent(err) {
								t.Fatalf("the unreadable result: %v, want permanent", err)
							}
						case err != nil:
							t.Fatalf("result %d: %v", i, err)
						}
					}
				}
				if err := r.Store.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: ids, Now: r.Clock.Now()}); err != nil {
					t.Fatal(err)
				}
				r.Clock.Advance(time.Second)
			}
			for _, id := range []string{"e1", "e2", "e3"} {
				ex, err := r.Store.CampaignExecutionGet(ctx, executionOf(t, r, id))
				if err != nil || ex.Status != store.ExecutionCompleted || ex.CurrentIndex != 2 {
					t.Fatalf("execution of %s: %+v %v, want COMPLETED at the third step", id, ex, err)
				}
				cmds, _ := r.Store.CampaignCommandsOf(ctx, ex.ExecutionID)
				if len(cmds) != 3 {
					t.Fatalf("execution of %s has %d commands, want 3", id, len(cmds))
				}
			}
			if refuse && (st.many == 0 || st.one == 0) {
				t.Fatalf("refused batches %d, results moved alone %d", st.many, st.one)
			}
		})
	}
}

// executionOf finds the execution the rig's campaign started for event id.
func executionOf(t *testing.T, r *rig, id string) string {
	t.Helper()
	var exe string
	err := r.Store.(interface{ DB() *sql.DB }).DB().QueryRow(`SELECT ExecutionId FROM CampaignExecution WHERE RecipientId = ?`, "cust-"+id).Scan(&exe)
	if err != nil {
		t.Fatal(err)
	}
	return exe
}
