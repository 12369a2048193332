package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/automation-platform/automation/shared/api/eventsapi"
	"github.com/automation-platform/automation/shared/api/registryapi"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/httpapi"
)

// Event gateway inputs (docs/gateway.md), sent through the Functions router like a client:
//
//	{"at": "…", "registry": {"events": [definition, …]}}
//	    POST /api/event-registry/import as operator "replay": a new version of each changed
//	    definition, in force for the next event. Prints a "registry" line (each type's
//	    version and whether it changed), or a "rejected" line naming the bad member.
//	{"at": "…", "ingest": [CloudEvent, …]}
//	    POST /api/events as one batch (application/cloudevents-batch+json) arriving at "at".
//	    Prints an "ingest" line with the batch's counts and a "rejected" line for each
//	    rejected event (its id, the JSON Pointer of the bad member and the reason).
//
// Accepted events are routed by the outbox relay on the next tick: one "routed" line per
// message published to events, tracking, noti or (the source route) domain-events.

// RegistryOperator names the replay's registry changes.
const RegistryOperator = "replay"

// RegistryLine is the output line of an applied registry input.
type RegistryLine struct {
	Kind  string                 `json:"kind"` // "registry"
	At    string                 `json:"at"`
	Input int                    `json:"input"`
	Types []gateway.ImportResult `json:"types"`
}

// IngestLine is the output line of an ingest input: how its events fared.
type IngestLine struct {
	Kind      string `json:"kind"` // "ingest"
	At        string `json:"at"`
	Input     int    `json:"input"`
	Accepted  int    `json:"accepted"`
	Filtered  int    `json:"filtered,omitempty"` // accepted, routed nowhere
	Duplicate int    `json:"duplicate"`
	Rejected  int    `json:"rejected"`
	// Replayed: the answer is the one stored for the input's idempotencyKey
	// (Idempotent-Replayed), not a new ingest.
	Replayed bool `json:"replayed,omitempty"`
}

// RoutedLine is one gateway message the relay published.
type RoutedLine struct {
	Kind      string `json:"kind"` // "routed"
	At        string `json:"at"`
	Topic     string `json:"topic"`
	EventID   string `json:"eventId"`
	SessionID string `json:"sessionId"`
}

// routed writes the "routed" line of a published gateway message (app.Options.OnRouted).
func (r *runner) routed(m gateway.Routed) {
	r.routedCount++
	l := RoutedLine{Kind: "routed", At: r.clock.Now().UTC().Format(time.RFC3339), Topic: m.Topic, EventID: m.EventID, SessionID: m.SessionID}
	if err := r.enc.Encode(l); err != nil && r.err == nil {
		r.err = err
	}
}

// post sends body to path through the Functions router.
func (r *runner) post(ctx context.Context, path, contentType string, body []byte, header map[string]string) (int, []byte) {
	code, answer, _ := r.postReplayed(ctx, path, contentType, body, header)
	return code, answer
}

// postReplayed is post that also says whether the answer was an Idempotency-Key replay.
func (r *runner) postReplayed(ctx context.Context, path, contentType string, body []byte, header map[string]string) (int, []byte, bool) {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	r.api.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes(), rec.Header().Get(httpapi.HeaderIdempotentReplayed) == "true"
}

// problemField returns a problem's first field and its message, else its detail.
func problemField(body []byte) (string, string) {
	var p httpapi.Problem
	if json.Unmarshal(body, &p) != nil {
		return "", string(bytes.TrimSpace(body))
	}
	if len(p.Errors) > 0 {
		return p.Errors[0].Field, p.Errors[0].Message
	}
	return "", p.Detail
}

func (r *runner) registryInput(ctx context.Context, idx int) error {
	in := r.sc.Inputs[idx]
	at := in.At.UTC().Format(time.RFC3339)
	code, body := r.post(ctx, registryapi.Prefix+"/import", "application/json", in.Registry,
		map[string]string{httpapi.HeaderOperator: RegistryOperator})
	switch {
	case code >= 500:
		return fmt.Errorf("inputs[%d]: registry import answered %d: %s", idx, code, body)
	case code >= 400:
		ptr, msg := problemField(body)
		r.rejected++
		return r.enc.Encode(RejectedLine{Kind: "rejected", At: at, Input: idx, Pointer: ptr, Error: msg})
	}
	var res struct {
		Types []gateway.ImportResult `json:"types"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return fmt.Errorf("inputs[%d]: registry import answer: %w", idx, err)
	}
	return r.enc.Encode(RegistryLine{Kind: "registry", At: at, Input: idx, Types: res.Types})
}

func (r *runner) ingestInput(ctx context.Context, idx int) error {
	in := r.sc.Inputs[idx]
	at := in.At.UTC().Format(time.RFC3339)
	var hdr map[string]string
	if in.IdempotencyKey != "" {
		hdr = map[string]string{httpapi.HeaderIdempotencyKey: in.IdempotencyKey}
	}
	code, body, replayed := r.postReplayed(ctx, eventsapi.Path, "application/cloudevents-batch+json", in.Ingest, hdr)
	if code != http.StatusOK {
		if code >= 500 {
			return fmt.Errorf("inputs[%d]: ingest answered %d: %s", idx, code, body)
		}
		ptr, msg := problemField(body)
		r.rejected++
		return r.enc.Encode(RejectedLine{Kind: "rejected", At: at, Input: idx, Pointer: ptr, Error: fmt.Sprintf("%d: %s", code, msg)})
	}
	var res eventsapi.Response
	if err := json.Unmarshal(body, &res); err != nil {
		return fmt.Errorf("inputs[%d]: ingest answer: %w", idx, err)
	}
	line := IngestLine{Kind: "ingest", At: at, Input: idx, Replayed: replayed}
	var rejected []RejectedLine
	for _, x := range res.Results {
		switch x.Status {
		case gateway.StatusAccepted:
			line.Accepted++
			if r.eventInput == nil {
				r.eventInput = map[string]int{}
			}
			r.eventInput[x.ID] = idx
			if x.Filtered {
				line.Filtered++
			} else if len(x.Routes) > 0 {
				r.relayDue = true
			}
		case gateway.StatusDuplicate:
			line.Duplicate++
		default:
			line.Rejected++
			rejected = append(rejected, RejectedLine{Kind: "rejected", At: at, Input: idx, EventID: x.ID, Pointer: x.Pointer, Error: x.Reason})
		}
	}
	if err := r.enc.Encode(line); err != nil {
		return err
	}
	for _, l := range rejected {
		r.rejected++
		if err := r.enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}
