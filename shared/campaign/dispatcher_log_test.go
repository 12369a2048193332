package campaign_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/store"
)

// failingStore is the rig's store with faults: a campaign listed with an unreadable
// definition, and an advance the store refuses.
type failingStore struct {
	store.CampaignStore
	badDefinition string // the campaign whose listed definition is unreadable
	advanceErr    error
}

func (s failingStore) CampaignListByTrigger(ctx context.Context, bu, typ string) ([]store.Campaign, error) {
	cs, err := s.CampaignStore.CampaignListByTrigger(ctx, bu, typ)
	for i := range cs {
		if cs[i].CampaignID == s.badDefinition {
			cs[i].DefinitionJSON = "{"
		}
	}
	return cs, err
}

func (s failingStore) CampaignAdvance(ctx context.Context, p store.CampaignAdvanceParams) (bool, error) {
	if s.advanceErr != nil {
		return false, s.advanceErr
	}
	return s.CampaignStore.CampaignAdvance(ctx, p)
}

func (s failingStore) CampaignAdvanceMany(ctx context.Context, ps []store.CampaignAdvanceParams) ([]bool, error) {
	if s.advanceErr != nil {
		return nil, s.advanceErr
	}
	return s.CampaignStore.CampaignAdvanceMany(ctx, ps)
}

func dispatcherFailure(t *testing.T, buf *bytes.Buffer) map[string]any {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.Contains(l, `"campaign dispatcher failed"`) {
			var line map[string]any
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
			return line
		}
	}
	t.Fatalf("no failure logged; log %s", buf.String())
	return nil
}

func wantLine(t *testing.T, line, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %v, want %v (line %v)", k, line[k], v, line)
		}
	}
}

// The dispatcher logs a definition it cannot read, and a result whose move the store
// refuses, at ERROR with the ids seed 002 (section 10) asks for: sourceEventId, executionId,
// commandId, campaignId, the unit, the step and an error code (docs/operations.md#log-fields).
func TestDispatcherLogsFailuresWithTheirIDs(t *testing.T) {
	t.Run("definition unreadable", func(t *testing.T) {
		r := newRig(t, campaign.ProviderConfig{})
		r.save("welcome", threeSteps("sim"), "r1")
		var buf bytes.Buffer
		d := &campaign.Dispatcher{Store: failingStore{CampaignStore: r.Store, badDefinition: "welcome"}, Clock: r.Clock,
			Log: slog.New(slog.NewJSONHandler(&buf, nil))}
		if _, err := d.HandleEvent(context.Background(), event("evt-1", "cust-1")); err != nil {
			t.Fatal(err)
		}
		wantLine(t, dispatcherFailure(t, &buf), map[string]any{"level": "ERROR", "sourceEventId": "evt-1",
			"executionId": campaign.ExecutionID("bu-1", "welcome", "r1", "cust-1", appEvent("evt-1")), "commandId": "",
			"campaignId": "welcome", "businessUnitId": "bu-1", "step": campaign.StepTrigger, "errorCode": campaign.CodeDefinitionUnreadable})
	})
	t.Run("result not moved", func(t *testing.T) {
		r := newRig(t, campaign.ProviderConfig{})
		def := threeSteps("sim")
		def.Actions = def.Actions[1:2]
		r.save("welcome", def, "r1")
		r.Fire(t, "evt-1", "cust-1")
		r.Settle(time.Minute, 10)
		exe := campaign.ExecutionID("bu-1", "welcome", "r1", "cust-1", appEvent("evt-1"))
		cmd := r.Commands(exe)[0]
		if !cmd.Status.Terminal() {
			t.Fatalf("the command is %s, want a terminal status", cmd.Status)
		}
		var buf bytes.Buffer
		refused := errors.New("database is locked")
		d := &campaign.Dispatcher{Store: failingStore{CampaignStore: r.Store, advanceErr: refused}, Clock: r.Clock,
			Log: slog.New(slog.NewJSONHandler(&buf, nil))}
		body := []byte(fmt.Sprintf(`{"commandId":%q,"revision":%d,"status":%q}`, cmd.CommandID, cmd.Revision, cmd.Status))
		if _, err := d.HandleResult(context.Background(), body); !errors.Is(err, refused) {
			t.Fatalf("HandleResult: %v, want the store's error", err)
		}
		wantLine(t, dispatcherFailure(t, &buf), map[string]any{"level": "ERROR", "sourceEventId": "evt-1", "executionId": exe,
			"commandId": cmd.CommandID, "campaignId": "welcome", "businessUnitId": "bu-1", "step": campaign.StepResult + ":" + cmd.ActionKey,
			"errorCode": campaign.CodeStoreError, "error": "database is locked"})
		buf.Reset()
		if errs := d.HandleResultBatch(context.Background(), [][]byte{body}, nil); !errors.Is(errs[0], refused) {
			t.Fatalf("HandleResultBatch: %v, want the store's error", errs)
		}
		wantLine(t, dispatcherFailure(t, &buf), map[string]any{"commandId": cmd.CommandID, "executionId": exe, "errorCode": campaign.CodeStoreError})
	})
}
