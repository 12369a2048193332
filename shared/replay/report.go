package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
)

// ReportInputs are the report-subscription input kinds (docs/architecture.md#report-subscriptions). Each is replayed
// through the report HTTP API exactly as a client would call it (problem details,
// If-Match, Idempotency-Key), and answered by an "api" output line.
type ReportInputs struct {
	// ReportSubscription {"guid": …, and the subscription fields of POST/PUT}: created, or
	// replaced with If-Match of its current version (pause and resume through "status").
	ReportSubscription json.RawMessage `json:"reportSubscription,omitempty"`
	// ReportSubscriptionDelete {"guid": …}.
	ReportSubscriptionDelete json.RawMessage `json:"reportSubscriptionDelete,omitempty"`
	// ReportRunNow {"subscriptionGuid": …, "idempotencyKey": …, "operator": …, "body": {…}}:
	// POST …/runs; the same idempotencyKey returns the same run.
	ReportRunNow json.RawMessage `json:"reportRunNow,omitempty"`
	// ReportRollout {"businessUnitId" or "subscriptionGuid": …, "mode": "Cutover"}; a null
	// mode removes the scope's mode (rollback).
	ReportRollout json.RawMessage `json:"reportRollout,omitempty"`
	// OldScheduler {"action": "acquire"|"deliveryCreated"|"release", "schedulerKey": …,
	// "coordinates": {…}}: the old scheduler's calls to the ownership endpoints (its
	// ownerVersion is the one its last acquire of the key returned).
	OldScheduler json.RawMessage `json:"oldScheduler,omitempty"`
}

const reportKindNames = `"reportSubscription", "reportSubscriptionDelete", "reportRunNow", "reportRollout" or "oldScheduler"`

func (r ReportInputs) count() int {
	n := 0
	for _, f := range []json.RawMessage{r.ReportSubscription, r.ReportSubscriptionDelete, r.ReportRunNow, r.ReportRollout, r.OldScheduler} {
		if len(f) > 0 {
			n++
		}
	}
	return n
}

// APILine is an "api" output line: one report input's request and answer. A 4xx answer
// carries the problem's detail in Error and counts as rejected in the summary.
type APILine struct {
	Kind     string         `json:"kind"` // "api"
	At       string         `json:"at"`
	Input    int            `json:"input"`
	Request  string         `json:"request"` // method and path
	Status   int            `json:"status"`
	Replayed bool           `json:"replayed,omitempty"` // Idempotent-Replayed
	Result   map[string]any `json:"result,omitempty"`
	Error    string         `json:"error,omitempty"`
}

// reportState is the runner's report API client.
type reportState struct {
	api           *funchost.Router // the runtime's Functions router (the report API's routes are on it)
	ownerVersions map[string]int64 // the old scheduler's ownerVersion per key
}

type call struct {
	method, path string
	body         any
	header       map[string]string
	keep         []string // body fields copied into the output line
}

func (r *runner) reportInput(ctx context.Context, idx int) error {
	if r.ownerVersions == nil {
		r.ownerVersions = map[string]int64{}
	}
	in := r.sc.Inputs[idx]
	c, err := r.reportCall(ctx, in.ReportInputs)
	if err != nil {
		r.rejected++
		return r.enc.Encode(APILine{Kind: "api", At: in.At.UTC().Format(time.RFC3339), Input: idx, Status: http.StatusBadRequest, Error: err.Error()})
	}
	code, hdr, body := r.serve(ctx, c)
	line := APILine{Kind: "api", At: in.At.UTC().Format(time.RFC3339), Input: idx, Request: c.method + " " + c.path, Status: code,
		Replayed: hdr.Get(httpapi.HeaderIdempotentReplayed) == "true"}
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	switch {
	case code >= 500:
		return fmt.Errorf("inputs[%d]: %s %s answered %d: %s", idx, c.method, c.path, code, body)
	case code >= 400:
		r.rejected++
		line.Error, _ = m["detail"].(string)
	default:
		line.Result = map[string]any{}
		for _, k := range c.keep {
			if v, ok := lookup(m, k); ok {
				line.Result[k[strings.LastIndexByte(k, '.')+1:]] = v
			}
		}
		if len(in.OldScheduler) > 0 {
			if own, ok := m["ownership"].(map[string]any); ok && m["acquired"] == true {
				if v, ok := own["ownerVersion"].(float64); ok {
					r.ownerVersions[own["schedulerKey"].(string)] = int64(v)
				}
			}
		}
	}
	return r.enc.Encode(line)
}

// segment returns id escaped as one URL path segment (ids come from the scenario file: a
// space, "%", "?" or "/" in them must neither break the request nor reach another route).
func segment(field, id string) (string, error) {
	if id == "" || id == "." || id == ".." {
		return "", fmt.Errorf("%s %q is not an id", field, id)
	}
	return url.PathEscape(id), nil
}

// lookup reads a dotted path ("nextRun.localTime") from a decoded JSON object.
func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, p := range strings.Split(path, ".") {
		o, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = o[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// ifMatchCurrent is c with If-Match set to the ETag of what c.path holds now (a GET first),
// when it exists; c as it is otherwise.
func (r *runner) ifMatchCurrent(ctx context.Context, c call) call {
	if code, hdr, _ := r.serve(ctx, call{method: http.MethodGet, path: c.path}); code == http.StatusOK {
		c.header = map[string]string{"If-Match": hdr.Get("ETag")}
	}
	return c
}

func (r *runner) serve(ctx context.Context, c call) (int, http.Header, []byte) {
	var rd *bytes.Reader
	if c.body != nil {
		b, _ := json.Marshal(c.body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequestWithContext(ctx, c.method, c.path, rd)
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	r.api.ServeHTTP(rec, req)
	return rec.Code, rec.Header(), rec.Body.Bytes()
}

// reportCall turns one report input into its API request.
func (r *runner) reportCall(ctx context.Context, in ReportInputs) (call, error) {
	switch {
	case len(in.ReportSubscription) > 0:
		var body map[string]json.RawMessage
		if err := json.Unmarshal(in.ReportSubscription, &body); err != nil {
			return call{}, fmt.Errorf("reportSubscription: must be a JSON object")
		}
		var guid string
		if err := json.Unmarshal(body["guid"], &guid); err != nil || guid == "" {
			return call{}, fmt.Errorf("reportSubscription.guid is required")
		}
		delete(body, "guid")
		seg, err := segment("reportSubscription.guid", guid)
		if err != nil {
			return call{}, err
		}
		c := call{method: http.MethodPut, path: "/api/report-subscriptions/" + seg, body: body,
			keep: []string{"version", "status", "nextRun.localTime", "rollout.mode"}}
		// Replace with If-Match of the current version when it exists.
		return r.ifMatchCurrent(ctx, c), nil
	case len(in.ReportSubscriptionDelete) > 0:
		var d struct {
			Guid string `json:"guid"`
		}
		if err := strictDecode(in.ReportSubscriptionDelete, &d); err != nil || d.Guid == "" {
			return call{}, fmt.Errorf("reportSubscriptionDelete: want {\"guid\"}")
		}
		seg, err := segment("reportSubscriptionDelete.guid", d.Guid)
		if err != nil {
			return call{}, err
		}
		return r.ifMatchCurrent(ctx, call{method: http.MethodDelete, path: "/api/report-subscriptions/" + seg}), nil
	case len(in.ReportRunNow) > 0:
		var d struct {
			SubscriptionGuid string          `json:"subscriptionGuid"`
			IdempotencyKey   string          `json:"idempotencyKey"`
			Operator         string          `json:"operator"`
			Body             json.RawMessage `json:"body"`
		}
		if err := strictDecode(in.ReportRunNow, &d); err != nil || d.SubscriptionGuid == "" {
			return call{}, fmt.Errorf("reportRunNow: want {\"subscriptionGuid\", \"idempotencyKey\", \"operator\", \"body\"}")
		}
		seg, err := segment("reportRunNow.subscriptionGuid", d.SubscriptionGuid)
		if err != nil {
			return call{}, err
		}
		c := call{method: http.MethodPost, path: "/api/report-subscriptions/" + seg + "/runs",
			header: map[string]string{}, keep: []string{"manualRunGuid", "runKeyHash", "status", "periodStartUtc", "periodEndUtc"}}
		if len(d.Body) > 0 {
			c.body = d.Body
		}
		if d.IdempotencyKey != "" {
			c.header[httpapi.HeaderIdempotencyKey] = d.IdempotencyKey
		}
		if d.Operator != "" {
			c.header[httpapi.HeaderOperator] = d.Operator
		}
		return c, nil
	case len(in.ReportRollout) > 0:
		var d struct {
			BusinessUnitID   string  `json:"businessUnitId"`
			SubscriptionGuid string  `json:"subscriptionGuid"`
			Mode             *string `json:"mode"`
		}
		if err := strictDecode(in.ReportRollout, &d); err != nil || (d.BusinessUnitID == "") == (d.SubscriptionGuid == "") {
			return call{}, fmt.Errorf("reportRollout: want {\"businessUnitId\" or \"subscriptionGuid\", \"mode\"}")
		}
		path := "/api/report-runs/rollout/business-units/"
		id, field := d.BusinessUnitID, "reportRollout.businessUnitId"
		if d.SubscriptionGuid != "" {
			path = "/api/report-runs/rollout/subscriptions/"
			id, field = d.SubscriptionGuid, "reportRollout.subscriptionGuid"
		}
		seg, err := segment(field, id)
		if err != nil {
			return call{}, err
		}
		path += seg
		if d.Mode == nil {
			return call{method: http.MethodDelete, path: path, keep: []string{"removed", "released"}}, nil
		}
		return call{method: http.MethodPut, path: path, body: map[string]string{"mode": *d.Mode}, keep: []string{"mode", "released"}}, nil
	case len(in.OldScheduler) > 0:
		var d struct {
			Action       string          `json:"action"`
			SchedulerKey string          `json:"schedulerKey"`
			Coordinates  json.RawMessage `json:"coordinates"`
		}
		if err := strictDecode(in.OldScheduler, &d); err != nil {
			return call{}, fmt.Errorf("oldScheduler: %v", err)
		}
		keep := []string{"acquired", "reason", "ownership.ownerVersion", "ownership.status"}
		switch d.Action {
		case "acquire":
			return call{method: http.MethodPost, path: "/api/report-runs/ownership/acquire", body: map[string]string{"schedulerKey": d.SchedulerKey}, keep: keep}, nil
		case "deliveryCreated", "release":
			path := "/api/report-runs/ownership/delivery-created"
			if d.Action == "release" {
				path = "/api/report-runs/ownership/release"
			}
			body := map[string]any{"schedulerKey": d.SchedulerKey, "ownerVersion": r.ownerVersions[d.SchedulerKey]}
			if len(d.Coordinates) > 0 {
				body["coordinates"] = d.Coordinates
			}
			return call{method: http.MethodPost, path: path, body: body, keep: []string{"ownerVersion", "status"}}, nil
		}
		return call{}, fmt.Errorf("oldScheduler.action must be acquire, deliveryCreated or release, got %s", strconv.Quote(d.Action))
	}
	return call{}, fmt.Errorf("no report input")
}
