package campaign_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaign/providersim"
)

// A command recorded FAILED is logged at ERROR with the ids seed 002 (section 10) asks for:
// sourceEventId, executionId, commandId, campaignId, the unit, the step and an error code
// (docs/operations.md#log-fields); a command that succeeds logs no such line.
func TestFailedCommandIsLoggedWithItsIDs(t *testing.T) {
	r := newRig(t, campaign.ProviderConfig{})
	var buf bytes.Buffer
	r.Worker.Log = slog.New(slog.NewJSONHandler(&buf, nil))
	r.topUpOnly("welcome", "sim")
	r.faults("sim", providersim.Faults{Mode: providersim.ModeFail})
	r.Worker.Backoff.Steps = []time.Duration{time.Minute}
	r.Fire(t, "evt-1", "cust-1")
	r.Settle(time.Minute, 10)
	exe := campaign.ExecutionID("bu-1", "welcome", "r1", "cust-1", appEvent("evt-1"))
	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.Contains(l, `"campaign command FAILED"`) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := r.Commands(exe)[0]
	want := map[string]any{"level": "ERROR", "sourceEventId": "evt-1", "executionId": exe, "commandId": cmd.CommandID,
		"campaignId": "welcome", "businessUnitId": "bu-1", "step": "campaign-command:" + cmd.ActionKey, "errorCode": "PROVIDER_FAILED"}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %v, want %v (line %v; log %s)", k, line[k], v, line, buf.String())
		}
	}
}
