package supportclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/api/supportapi"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/support"
)

// DefaultBaseURL is a local `automation serve` (and the Functions host's default port).
const DefaultBaseURL = "http://127.0.0.1:7071"

// maxAnswerBytes bounds an answer read into memory (16 MiB).
const maxAnswerBytes = 16 << 20

// Client calls the support API. Every request carries the credentials and scope set here.
type Client struct {
	// BaseURL is the API's base URL, e.g. DefaultBaseURL; routes are appended to it.
	BaseURL string
	// Token is the bearer token (Authorization: Bearer), if any.
	Token string
	// FunctionKey is the SupportApi function's key (x-functions-key, authLevel "function"),
	// for the Function App; empty for a local serve.
	FunctionKey string
	// Operator names the person acting (httpapi.HeaderOperator), for the audit; actions
	// require it.
	Operator string
	// BusinessUnits narrows what the caller sees (httpapi.HeaderBusinessUnits), a
	// comma-separated list; empty sends no header.
	BusinessUnits string
	// HTTP sends the requests; nil: a client with a one-minute timeout.
	HTTP *http.Client
}

// Answer is a 2xx answer: its raw body (JSON) and headers.
type Answer struct {
	Body   []byte
	Header http.Header
}

// APIError is a non-2xx answer, with the RFC 9457 problem details when the API sent them.
type APIError struct {
	Status  int
	Problem httpapi.Problem
	Body    string // the raw body, for answers without problem details
}

// Error renders the answer for a terminal: "STATUS Title: detail" and one indented line per
// field error the detail does not already say; without problem details, the status text and
// the body. API text is escaped by Clean.
func (e *APIError) Error() string {
	p := e.Problem
	if p.Title == "" {
		return Clean(fmt.Sprintf("%d %s: %s", e.Status, http.StatusText(e.Status), strings.TrimSpace(e.Body)))
	}
	msg := fmt.Sprintf("%d %s", e.Status, Clean(p.Title))
	if p.Detail != "" {
		msg += ": " + Clean(p.Detail)
	}
	for _, f := range p.Errors {
		if f.Field != "" && !strings.Contains(p.Detail, f.Message) {
			msg += "\n  " + Clean(f.Field) + ": " + Clean(f.Message)
		}
	}
	return msg
}

// FindQuery is a find (GET scheduler-rows): the filter as text, passed through for the API to
// validate (empty members are not sent), a page size and the cursor of the page before.
type FindQuery struct {
	support.Query
	Limit  int64 // 0: the API's default
	Cursor string
}

func (q FindQuery) values() url.Values {
	v := q.Query.Values()
	if q.Limit != 0 {
		v.Set("limit", strconv.FormatInt(q.Limit, 10))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	return v
}

// Find lists scheduler rows (supportapi.FindResponse).
func (c *Client) Find(ctx context.Context, q FindQuery) (Answer, error) {
	return c.do(ctx, http.MethodGet, supportapi.Prefix+"scheduler-rows", q.values(), nil, nil)
}

// Show reads one row by Id or Guid (support.Detail); its ETag header is the row's version.
func (c *Client) Show(ctx context.Context, ref string) (Answer, error) {
	return c.do(ctx, http.MethodGet, supportapi.Prefix+"scheduler-rows/"+url.PathEscape(ref), nil, nil, nil)
}

// Explain explains one source's reminders (support.Explanation).
func (c *Client) Explain(ctx context.Context, sourceType, sourceGuid string) (Answer, error) {
	return c.do(ctx, http.MethodGet, supportapi.Prefix+"explain", url.Values{"sourceType": {sourceType}, "sourceGuid": {sourceGuid}}, nil, nil)
}

// Metrics reads the pipeline's health figures (support.Metrics), for one business unit when
// businessUnitID is set.
func (c *Client) Metrics(ctx context.Context, businessUnitID string) (Answer, error) {
	q := url.Values{}
	if businessUnitID != "" {
		q.Set("businessUnitId", businessUnitID)
	}
	return c.do(ctx, http.MethodGet, supportapi.Prefix+"metrics", q, nil, nil)
}

// Release starts a paced release (support.ReleaseResult).
func (c *Client) Release(ctx context.Context, body supportapi.ReleaseBody) (Answer, error) {
	return c.do(ctx, http.MethodPost, supportapi.Prefix+"releases", nil, body, nil)
}

// Act runs a row action ("release", "retry", "cancel" or "run-now") on the row ref (Id or Guid) with
// If-Match: version (support.ActResult). version 0 reads the row's current version first
// (its ETag); an answer without a numeric ETag is an error.
func (c *Client) Act(ctx context.Context, action, ref string, version int64, reason string) (Answer, error) {
	if version == 0 {
		a, err := c.Show(ctx, ref)
		if err != nil {
			return Answer{}, err
		}
		v, err := strconv.ParseInt(strings.Trim(a.Header.Get("ETag"), `"`), 10, 64)
		if err != nil {
			return Answer{}, fmt.Errorf("the API sent no usable ETag (%q)", a.Header.Get("ETag"))
		}
		version = v
	}
	return c.do(ctx, http.MethodPost, supportapi.Prefix+"scheduler-rows/"+url.PathEscape(ref)+"/"+action, nil,
		supportapi.ActBody{Reason: reason}, map[string]string{"If-Match": httpapi.ETag(version)})
}

// do sends one request; body (when not nil) is sent as JSON. It returns a 2xx answer, or an
// *APIError for any other status; transport errors are returned as they are.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body any, header map[string]string) (Answer, error) {
	u := strings.TrimRight(c.BaseURL, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return Answer{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return Answer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.FunctionKey != "" {
		req.Header.Set("x-functions-key", c.FunctionKey)
	}
	if c.Operator != "" {
		req.Header.Set(httpapi.HeaderOperator, c.Operator)
	}
	if c.BusinessUnits != "" {
		req.Header.Set(httpapi.HeaderBusinessUnits, c.BusinessUnits)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: time.Minute}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return Answer{}, err
	}
	if resp.StatusCode/100 != 2 {
		e := &APIError{Status: resp.StatusCode, Body: string(b)}
		_ = json.Unmarshal(b, &e.Problem)
		return Answer{}, e
	}
	return Answer{Body: b, Header: resp.Header}, nil
}
