package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// IdempotencyHeader carries the EffectKey on every call of the HTTP action provider.
const IdempotencyHeader = "Idempotency-Key"

// HTTPProvider is the generic HTTP action provider (docs/campaigns.md#http-action-provider):
//
//	POST {BaseURL}/actions  Idempotency-Key: {effectKey}
//	     {"effectKey","commandId","businessUnitId","campaignId","recipientId","actionType","params"}
//	→ 2xx {"reference": "…"} taken effect; 408/425/429/503 not taken, retry (Retry-After
//	  honoured); other 4xx and 3xx permanent; other 5xx, or no answer once the request was
//	  written, UNKNOWN.
//	GET  {BaseURL}/actions/{effectKey}   (Lookup, when HasLookup)
//	→ 200 {"reference"} applied; 404 not applied; anything else unknown.
//
// With a Token, both requests carry Authorization: Bearer {Token}.
type HTTPProvider struct {
	BaseURL string
	Client  *http.Client // nil: a client without a timeout of its own (the worker's context bounds calls)
	// Dedupe: the provider declares that it deduplicates by Idempotency-Key.
	Dedupe bool
	// HasLookup: the provider answers GET /actions/{effectKey}.
	HasLookup bool
	// ActionTypes it serves.
	ActionTypes []string
	// Token, when set, is sent as a bearer token on every request (a secret: never logged).
	Token string
}

func (p *HTTPProvider) authorize(req *http.Request) {
	if p.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.Token)
	}
}

var (
	_ Provider = (*HTTPProvider)(nil)
	_ Looker   = (*HTTPProvider)(nil)
)

// Traits implements Provider.
func (p *HTTPProvider) Traits() Traits { return Traits{Dedupe: p.Dedupe} }

// Serves implements Provider.
func (p *HTTPProvider) Serves(t string) bool { return slices.Contains(p.ActionTypes, t) }

func (p *HTTPProvider) client() *http.Client {
	if p.Client != nil {
		return p.Client
	}
	return http.DefaultClient
}

type httpCallBody struct {
	EffectKey      string          `json:"effectKey"`
	CommandID      string          `json:"commandId"`
	BusinessUnitID string          `json:"businessUnitId"`
	CampaignID     string          `json:"campaignId"`
	RecipientID    string          `json:"recipientId"`
	ActionType     string          `json:"actionType"`
	Params         json.RawMessage `json:"params"`
}

type httpAnswer struct {
	Reference string `json:"reference"`
}

// Call implements Provider.
func (p *HTTPProvider) Call(ctx context.Context, c Call) (Result, error) {
	params := c.Params
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	body, err := json.Marshal(httpCallBody{EffectKey: c.EffectKey, CommandID: c.CommandID, BusinessUnitID: c.BusinessUnitID,
		CampaignID: c.CampaignID, RecipientID: c.RecipientID, ActionType: c.ActionType, Params: params})
	if err != nil {
		return Result{}, automation.Permanent(err)
	}
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			wrote.Store(true)
		}
	}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(p.BaseURL, "/")+"/actions", bytes.NewReader(body))
	if err != nil {
		return Result{}, automation.Permanent(err)
	}
	// Never let net/http replay a written request on a fresh connection (it would for one
	// carrying an Idempotency-Key): the worker decides on every resend, so an answer lost
	// is an UNKNOWN it records and resolves (see delivery/channel's webhook).
	req.GetBody = nil
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(IdempotencyHeader, c.EffectKey)
	p.authorize(req)
	resp, err := p.client().Do(req)
	if err != nil {
		if wrote.Load() {
			return Result{}, automation.Unknown(fmt.Errorf("action provider: no answer after the request was sent: %w", err))
		}
		return Result{}, fmt.Errorf("action provider: request not sent: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	status := fmt.Sprintf("action provider answered %s", resp.Status)
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		var a httpAnswer
		_ = json.Unmarshal(raw, &a)
		var kept json.RawMessage
		if json.Valid(raw) && len(raw) <= 4<<10 {
			kept = raw
		}
		return Result{Reference: a.Reference, Body: kept}, nil
	case code == http.StatusRequestTimeout || code == http.StatusTooEarly || code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			return Result{}, automation.RetryAfter(time.Duration(s)*time.Second, errors.New(status))
		}
		return Result{}, errors.New(status)
	case code >= 500:
		return Result{}, automation.Unknown(errors.New(status))
	default:
		return Result{}, automation.Permanent(fmt.Errorf("%s: %s", status, strings.TrimSpace(string(raw[:min(len(raw), 300)]))))
	}
}

// Lookup implements Looker; without HasLookup it answers LookupUnknown.
func (p *HTTPProvider) Lookup(ctx context.Context, c Call) (LookupStatus, Result, error) {
	if !p.HasLookup {
		return LookupUnknown, Result{}, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(p.BaseURL, "/")+"/actions/"+url.PathEscape(c.EffectKey), nil)
	if err != nil {
		return LookupUnknown, Result{}, err
	}
	p.authorize(req)
	resp, err := p.client().Do(req)
	if err != nil {
		return LookupUnknown, Result{}, fmt.Errorf("action provider lookup: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	switch resp.StatusCode {
	case http.StatusOK:
		var a httpAnswer
		_ = json.Unmarshal(raw, &a)
		return LookupApplied, Result{Reference: a.Reference}, nil
	case http.StatusNotFound:
		return LookupNotApplied, Result{}, nil
	}
	return LookupUnknown, Result{}, fmt.Errorf("action provider lookup answered %s", resp.Status)
}
