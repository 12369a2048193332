package campaign_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

// refusing is a campaign store whose CampaignFactApply refuses every call that holds the
// fact of command bad: the batch fails whole, as a store failure in its transaction would.
type refusing struct {
	store.CampaignStore
	bad   string
	calls int
}

func (s *refusing) CampaignFactApply(ctx context.Context, facts []store.CampaignActionOutcomeEvent, now time.Time) (store.DeliveryFactApplyResult, error) {
	s.calls++
	for _, f := range facts {
		if f.CommandID == s.bad {
			return store.DeliveryFactApplyResult{}, errors.New("refused")
		}
	}
	return s.CampaignStore.CampaignFactApply(ctx, facts, now)
}

// HandleBatch (the CampaignFactProjection batch trigger) counts exactly what Handle counts,
// one message at a time, under a reversed and duplicated batch; an unreadable message is
// permanent and the others still apply; a batch the store refuses is applied fact by fact,
// so only the refused fact fails.
func TestProjectionHandleBatch(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	r.welcomeThree()
	ctx := context.Background()
	facts := r.Pump() // applied one at a time by the rig's projection
	if len(facts) < 9 {
		t.Fatalf("%d facts", len(facts))
	}
	want, err := r.Store.CampaignCountsByDay(ctx, store.CampaignCountsParams{BusinessUnitID: "bu-1", CampaignID: "welcome", From: "2026-10-01", To: "2026-10-01"})
	if err != nil || len(want.Days) != 1 {
		t.Fatalf("counts %+v %v", want, err)
	}

	other := sqlitetest.Open(t)
	var bad string
	{
		var f store.CampaignActionOutcomeEvent
		_ = json.Unmarshal(facts[0], &f)
		bad = f.CommandID
	}
	st := &refusing{CampaignStore: other, bad: bad}
	p := &campaign.Projection{Store: st, Clock: r.Clock}
	batch := slices.Clone(facts)
	slices.Reverse(batch)
	batch = append(batch, facts...)                          // duplicated
	batch = slices.Insert(batch, 3, []byte(`{"commandId":`)) // unreadable
	errs := p.HandleBatch(ctx, batch)
	if len(errs) != len(batch) {
		t.Fatalf("%d errors for %d messages", len(errs), len(batch))
	}
	for i, err := range errs {
		var f store.CampaignActionOutcomeEvent
		readable := json.Unmarshal(batch[i], &f) == nil
		switch {
		case !readable:
			if !automation.IsPermanent(err) {
				t.Fatalf("message %d (unreadable): %v, want permanent", i, err)
			}
		case f.CommandID == bad:
			if err == nil || automation.IsPermanent(err) {
				t.Fatalf("message %d (refused fact): %v, want a plain failure (redelivered)", i, err)
			}
		case err != nil:
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if st.calls != 1+len(batch)-1 {
		t.Fatalf("store calls %d: want one for the batch, then one per readable fact", st.calls)
	}
	// The refused command's facts come again (redelivery) and now apply.
	st.bad = ""
	var again [][]byte
	for _, b := range facts {
		var f store.CampaignActionOutcomeEvent
		_ = json.Unmarshal(b, &f)
		if f.CommandID == bad {
			again = append(again, b)
		}
	}
	for i, err := range p.HandleBatch(ctx, again) {
		if err != nil {
			t.Fatalf("redelivered %d: %v", i, err)
		}
	}
	got, err := other.CampaignCountsByDay(ctx, store.CampaignCountsParams{BusinessUnitID: "bu-1", CampaignID: "welcome", From: "2026-10-01", To: "2026-10-01"})
	if err != nil || len(got.Days) != 1 || !maps.Equal(got.Days[0].ByStatus, want.Days[0].ByStatus) {
		t.Fatalf("batch counts %+v, one at a time %+v (%v)", got, want, err)
	}
	// Past store.MaxBatch the batch is refused whole, nothing applied.
	big := make([][]byte, store.MaxBatch+1)
	for i := range big {
		big[i] = facts[0]
	}
	calls := st.calls
	for _, err := range p.HandleBatch(ctx, big) {
		if err == nil {
			t.Fatal("a batch past store.MaxBatch was applied")
		}
	}
	if st.calls != calls {
		t.Fatal("a batch past store.MaxBatch reached the store")
	}
}

// An unreadable fact's error names what is wrong with it (the JSON, or the member that is
// missing or out of range), one at a time and in a batch: it used to say
// "unreadable fact: <nil>" for a fact without commandId or revision.
func TestProjectionUnreadableFactNamesTheMember(t *testing.T) {
	p := &campaign.Projection{Clock: automation.SystemClock{}}
	for body, want := range map[string]string{
		`{"revision":2}`:                   "commandId",
		`{"commandId":"c1"}`:               "revision",
		`{"commandId":"c1","revision":-1}`: "revision",
		`{"commandId":`:                    "JSON",
	} {
		for i, err := range []error{p.Handle(context.Background(), []byte(body)), p.HandleBatch(context.Background(), [][]byte{[]byte(body)})[0]} {
			if !automation.IsPermanent(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "<nil>") {
				t.Errorf("%s (call %d): %v, want a permanent error naming %s", body, i, err, want)
			}
		}
	}
}
