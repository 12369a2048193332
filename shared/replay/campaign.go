package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"time"

	"github.com/automation-platform/automation/shared/api/campaignapi"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/store"
)

// Campaign inputs (docs/campaigns.md#replay):
//
//	"campaignProviders": [{"name": "telco", "actionTypes": ["TOP_UP", "ADD_DATA"],
//	    "dedupe": true, "lookup": true,
//	    "faults": {"mode": "flaky", "failPercent": 20, "losePercent": 10}}]
//	    a simulated action provider (shared/campaign/providersim, a real HTTP server on
//	    127.0.0.1) per entry, registered as an HTTP action provider of that name; its faults
//	    are deterministic (by effect key and attempt), so a run prints the same lines.
//	{"at": "…", "campaign": {"campaignId": "welcome", "businessUnitId": …, "name": …,
//	    "status": …, "triggers": […], "actions": […]}}
//	    PUT /api/campaigns/{campaignId} as an operator who read the latest version (create,
//	    or replace with If-Match). Prints a "campaign" line, or a "rejected" line naming the
//	    bad member (nothing stored).
//
// Events reach campaigns through the gateway ("ingest" of a DIRECT event type). Every
// command outcome the worker records prints an "action" line; the summary counts the final
// status of every command ("actions").

// ProviderObserver is implemented by a Driver that checks the simulated action providers'
// effects (the simulator's campaign invariants): it gets them, by name, before the first
// process starts.
type ProviderObserver interface {
	Providers(map[string]*providersim.Server)
}

// CampaignProvider is one simulated action provider of a scenario.
type CampaignProvider struct {
	Name        string             `json:"name"`
	ActionTypes []string           `json:"actionTypes"`
	Dedupe      bool               `json:"dedupe,omitempty"`
	Lookup      bool               `json:"lookup,omitempty"`
	Faults      providersim.Faults `json:"faults,omitempty"`
}

var providerNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// parseCampaignProviders checks the scenario's providers (a bad one names its field).
func parseCampaignProviders(raw []json.RawMessage, bad func(string, ...any)) []CampaignProvider {
	var out []CampaignProvider
	seen := map[string]bool{"log": true, "webhook": true, "sms": true}
	for i, r := range raw {
		var p CampaignProvider
		if err := strictDecode(r, &p); err != nil {
			bad("campaignProviders[%d]: %v", i, err)
			continue
		}
		if !providerNameRE.MatchString(p.Name) || seen[p.Name] {
			bad("campaignProviders[%d].name %q must be a new name of a-z, 0-9 and -", i, p.Name)
			continue
		}
		seen[p.Name] = true
		if len(p.ActionTypes) == 0 {
			bad("campaignProviders[%d].actionTypes: at least one action type is required", i)
		}
		if err := providersim.New(providersim.Config{}).SetFaults(p.Faults); err != nil {
			bad("campaignProviders[%d].faults: %v", i, err)
		}
		out = append(out, p)
	}
	return out
}

// startProviders starts the scenario's simulated providers; the returned stop closes them.
func (r *runner) startProviders() (map[string]app.CampaignProvider, func(), error) {
	out := map[string]app.CampaignProvider{}
	var sims []*providersim.Server
	stop := func() {
		for _, s := range sims {
			_ = s.Close()
		}
	}
	for _, p := range r.sc.campaignProviders {
		s := providersim.New(providersim.Config{Dedupe: p.Dedupe, Lookup: p.Lookup})
		if err := s.SetFaults(p.Faults); err != nil {
			stop()
			return nil, nil, err
		}
		if err := s.Start("127.0.0.1:0"); err != nil {
			stop()
			return nil, nil, err
		}
		sims = append(sims, s)
		if r.providerSims == nil {
			r.providerSims = map[string]*providersim.Server{}
		}
		r.providerSims[p.Name] = s
		out[p.Name] = app.CampaignProvider{Provider: &campaign.HTTPProvider{BaseURL: s.URL(), Client: &http.Client{Transport: &http.Transport{}},
			Dedupe: p.Dedupe, HasLookup: p.Lookup, ActionTypes: p.ActionTypes}, Config: campaign.ProviderConfig{Timeout: 5 * time.Second}}
	}
	return out, stop, nil
}

// CampaignLine is the output line of an applied campaign input.
type CampaignLine struct {
	Kind       string `json:"kind"` // "campaign"
	At         string `json:"at"`
	Input      int    `json:"input"`
	CampaignID string `json:"campaignId"`
	Version    int64  `json:"version"`
	RunID      string `json:"runId"`
	Status     string `json:"status"`
}

// ActionLine is one command outcome the worker recorded.
type ActionLine struct {
	Kind          string `json:"kind"` // "action"
	At            string `json:"at"`
	CampaignID    string `json:"campaignId"`
	RecipientID   string `json:"recipientId"`
	ActionIndex   int    `json:"actionIndex"`
	ActionType    string `json:"actionType"`
	Status        string `json:"status"`
	Revision      int64  `json:"revision"`
	Attempt       int    `json:"attempt"`
	NextAttemptOn string `json:"nextAttemptOn,omitempty"`
	ProviderRef   string `json:"providerRef,omitempty"`
}

// action writes the "action" line of a recorded outcome (app.Options.OnCampaignAction).
func (r *runner) action(c store.CampaignCommand) {
	l := ActionLine{Kind: "action", At: r.clock.Now().UTC().Format(time.RFC3339), CampaignID: c.CampaignID, RecipientID: c.RecipientID,
		ActionIndex: c.ActionIndex, ActionType: c.ActionType, Status: string(c.Status), Revision: c.Revision, Attempt: c.AttemptCount, ProviderRef: c.ProviderRef}
	if c.NextAttemptOn != nil {
		l.NextAttemptOn = c.NextAttemptOn.UTC().Format(time.RFC3339)
	}
	if r.lastAction == nil {
		r.lastAction = map[string]string{}
	}
	r.lastAction[c.CommandID] = string(c.Status)
	if err := r.enc.Encode(l); err != nil && r.err == nil {
		r.err = err
	}
}

func (r *runner) campaignInput(ctx context.Context, idx int) error {
	in := r.sc.Inputs[idx]
	at := in.At.UTC().Format(time.RFC3339)
	var head struct {
		CampaignID     string `json:"campaignId"`
		BusinessUnitID string `json:"businessUnitId"`
	}
	_ = json.Unmarshal(in.Campaign, &head)
	var body map[string]json.RawMessage
	if err := json.Unmarshal(in.Campaign, &body); err != nil {
		return fmt.Errorf("inputs[%d].campaign: %w", idx, err)
	}
	delete(body, "campaignId")
	raw, _ := json.Marshal(body)
	headers := map[string]string{}
	if cur, err := r.e.Store.CampaignGet(ctx, head.BusinessUnitID, head.CampaignID); err == nil {
		headers["If-Match"] = fmt.Sprintf(`"%d"`, cur.Version)
	}
	req := httptest.NewRequestWithContext(ctx, http.MethodPut, campaignapi.Prefix+"/"+head.CampaignID, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	r.api.ServeHTTP(rec, req)
	switch code := rec.Code; {
	case code >= 500:
		return fmt.Errorf("inputs[%d]: campaign answered %d: %s", idx, code, rec.Body)
	case code >= 400:
		ptr, msg := problemField(rec.Body.Bytes())
		r.rejected++
		return r.enc.Encode(RejectedLine{Kind: "rejected", At: at, Input: idx, Pointer: ptr, Error: msg})
	}
	var c campaignapi.Campaign
	if err := json.Unmarshal(rec.Body.Bytes(), &c); err != nil {
		return fmt.Errorf("inputs[%d]: campaign answer: %w", idx, err)
	}
	return r.enc.Encode(CampaignLine{Kind: "campaign", At: at, Input: idx, CampaignID: c.CampaignID, Version: c.Version, RunID: c.RunID, Status: string(c.Status)})
}

// campaignSummary counts every command's latest recorded status (nil when none was recorded).
func (r *runner) campaignSummary() map[string]int {
	if len(r.lastAction) == 0 {
		return nil
	}
	out := map[string]int{}
	for _, st := range r.lastAction {
		out[st]++
	}
	return out
}
