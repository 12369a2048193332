package httpapi

import (
	"context"
	"net/http"
)

// Registrar is where routes go: funchost.Router.RegisterHTTP (or a mux with that method).
type Registrar interface {
	RegisterHTTP(pattern string, h http.Handler)
}

// UnitFrom says where a route's request names its business unit.
type UnitFrom int

const (
	// UnitNone: the route names no unit, or checks one itself in Call.
	UnitNone UnitFrom = iota
	// UnitQuery: ?businessUnitId=… is required and must be in the caller's scope (RequireUnit).
	UnitQuery
	// UnitBody: the body's business unit (Endpoint.BodyUnit) is required and in scope.
	UnitBody
)

// IfMatchRule says whether a route reads If-Match.
type IfMatchRule int

const (
	IfMatchNone     IfMatchRule = iota // If-Match is not read (nor refused)
	IfMatchOptional                    // read when given: In.Version, In.VersionGiven
	IfMatchRequired                    // 428 without it
)

// BodyRule says whether a route reads a JSON body.
type BodyRule int

const (
	BodyNone     BodyRule = iota // the body is not read
	BodyRequired                 // DecodeJSON: strict, one object
	BodyOptional                 // DecodeOptionalJSON: an empty body leaves Req at its zero value
)

// Paging is a list route's page size: ?limit= from 1 to Max, Default when absent, and,
// unless LimitOnly, ?cursor= (In.After decodes it).
type Paging struct {
	Default, Max int
	LimitOnly    bool
}

// Meta is what an endpoint declares about itself, for the router and for the check of the
// declarations against the OpenAPI documents (openapitest.EndpointDiff).
type Meta struct {
	Method, Path string
	// Body is true when the route reads a request body (BodyRequired, or BodyOptional of a
	// type other than struct{}).
	Body bool
	// Statuses are the success statuses it answers, the usual one first.
	Statuses []int
}

// Pattern is the router pattern "METHOD /path".
func (m Meta) Pattern() string { return m.Method + " " + m.Path }

// ReadsBody reports Body (for openapitest, which may not import this package).
func (m Meta) ReadsBody() bool { return m.Body }

// Answers returns Statuses.
func (m Meta) Answers() []int { return m.Statuses }

// Route is one mounted route: its metadata and its handler (see Mount).
type Route interface {
	Meta() Meta
	Serve(w http.ResponseWriter, r *http.Request) error
}

// Endpoint is a JSON route declared once: its method and path, what its prelude checks,
// its request type Req (the JSON body; struct{} for none) and its answer type Resp, and the
// service call. Serve runs the prelude in this order, answering the first error as problem
// details and calling nothing:
//
//  1. the query string: only businessUnitId (UnitQuery), Query and limit/cursor (Paging)
//     are known, each at most once (Query.Check);
//  2. UnitQuery: the unit is required and in the caller's scope (RequireUnit), then UnitCheck;
//  3. Paging: limit in [1, Max];
//  4. If-Match (IfMatch);
//  5. Operator, unless the unit is in the body (RequireOperator);
//  6. the body (DecodeJSON or DecodeOptionalJSON: strict, the one error shape);
//  7. UnitBody: BodyUnit(&body) is required and in scope, then UnitCheck, then Operator;
//
// then Call, and on success the answer: the headers Call put in In.Header, ETag(resp) as the
// ETag header when ETag is set, and resp as JSON with In.Status (Status unless Call changed
// it; 204 No Content sends no body). A route whose checks do not
// fit this order leaves the step out and does it in Call with the same helpers.
type Endpoint[Req, Resp any] struct {
	Method, Path string
	Unit         UnitFrom
	// BodyUnit returns the unit a UnitBody request names.
	BodyUnit func(*Req) string
	// UnitCheck, when set, runs right after the unit is found in scope (UnitQuery: step 2;
	// UnitBody: step 7): a route whose units must also be stored answers its error (404 for
	// one that does not exist, as for one outside the scope) before anything else is read.
	UnitCheck func(ctx context.Context, unit string) error
	// Query names the query parameters the route knows besides businessUnitId, limit and cursor.
	Query []string
	// QueryUnchecked skips step 1: the route ignores its query string, whatever it holds.
	// Only for routes that did so before the rule of strict queries (changing it is a
	// change of their contract); a new route leaves it false.
	QueryUnchecked bool
	Paging         *Paging
	IfMatch        IfMatchRule
	// Operator, when not empty, names the audited action ("change", "release"): the write
	// needs X-Automation-Operator or a signed-in user (RequireOperator).
	Operator string
	Body     BodyRule
	// Status is the success status (200 when 0); Also lists others Call may choose (201 on create).
	Status int
	Also   []int
	// ETag, when set, gives the version the answer's ETag header names.
	ETag func(Resp) int64
	// Call is the service call.
	Call func(ctx context.Context, in *In[Req]) (Resp, error)
}

// In is what the prelude read for Call.
type In[Req any] struct {
	Request *http.Request
	Query   Query
	// Unit is the business unit named (UnitQuery, UnitBody; "" otherwise).
	Unit string
	// Version is the If-Match version; VersionGiven is false when it was absent (IfMatchOptional).
	Version      int64
	VersionGiven bool
	// Operator is the audited name when Endpoint.Operator is set.
	Operator string
	// Limit is the page size (Paging).
	Limit int
	// Body is the decoded request body.
	Body Req
	// Status is the success status; Call may set one of Endpoint.Also.
	Status int
	// Header holds headers Call adds to a success answer (Location).
	Header http.Header
}

// Path returns the path value name ("campaignId" of /api/campaigns/{campaignId}).
func (in *In[Req]) Path(name string) string { return in.Request.PathValue(name) }

// After decodes the ?cursor= of a paged route into pos, bound to query (DecodeCursor); pos
// is left unchanged when no cursor was sent.
func (in *In[Req]) After(query string, pos any) error {
	if c := in.Query.String("cursor"); c != "" {
		return DecodeCursor(c, query, pos)
	}
	return nil
}

// Meta implements Route.
func (e Endpoint[Req, Resp]) Meta() Meta {
	st := e.Status
	if st == 0 {
		st = http.StatusOK
	}
	// An optional body of struct{} carries nothing: the route only tolerates "{}" (a client
	// that always sends an object), which is not a request body to document.
	var zero Req
	_, nothing := any(zero).(struct{})
	body := e.Body == BodyRequired || (e.Body == BodyOptional && !nothing)
	return Meta{Method: e.Method, Path: e.Path, Body: body, Statuses: append([]int{st}, e.Also...)}
}

// Serve implements Route: the prelude, Call, the answer.
func (e Endpoint[Req, Resp]) Serve(w http.ResponseWriter, r *http.Request) error {
	in := In[Req]{Request: r, Query: NewQuery(r.URL.Query()), Status: e.Status, Header: http.Header{}}
	if in.Status == 0 {
		in.Status = http.StatusOK
	}
	if err := e.prelude(r, &in); err != nil {
		return err
	}
	resp, err := e.Call(r.Context(), &in)
	if err != nil {
		return err
	}
	for k, v := range in.Header {
		w.Header()[k] = v
	}
	if e.ETag != nil {
		SetETag(w, e.ETag(resp))
	}
	if in.Status == http.StatusNoContent {
		w.WriteHeader(in.Status)
		return nil
	}
	WriteJSON(w, in.Status, resp)
	return nil
}

func (e Endpoint[Req, Resp]) prelude(r *http.Request, in *In[Req]) error {
	known := append([]string(nil), e.Query...)
	if e.Unit == UnitQuery {
		known = append([]string{"businessUnitId"}, known...)
	}
	if e.Paging != nil {
		known = append(known, "limit")
		if !e.Paging.LimitOnly {
			known = append(known, "cursor")
		}
	}
	if !e.QueryUnchecked {
		if err := in.Query.Check(known...); err != nil {
			return err
		}
	}
	if e.Unit == UnitQuery {
		in.Unit = in.Query.String("businessUnitId")
		if err := e.unit(r, in.Unit); err != nil {
			return err
		}
	}
	if e.Paging != nil {
		limit, err := in.Query.Int("limit", e.Paging.Default, 1, e.Paging.Max)
		if err != nil {
			return err
		}
		in.Limit = limit
	}
	if e.IfMatch != IfMatchNone {
		v, given, err := IfMatch(r, e.IfMatch == IfMatchRequired)
		if err != nil {
			return err
		}
		in.Version, in.VersionGiven = v, given
	}
	operator := func() (err error) {
		if e.Operator != "" {
			in.Operator, err = RequireOperator(r, e.Operator)
		}
		return err
	}
	if e.Unit != UnitBody {
		if err := operator(); err != nil {
			return err
		}
	}
	switch e.Body {
	case BodyRequired:
		if err := DecodeJSON(r, &in.Body); err != nil {
			return err
		}
	case BodyOptional:
		if err := DecodeOptionalJSON(r, &in.Body); err != nil {
			return err
		}
	}
	if e.Unit == UnitBody {
		in.Unit = e.BodyUnit(&in.Body)
		if err := e.unit(r, in.Unit); err != nil {
			return err
		}
		return operator()
	}
	return nil
}

// unit checks a named unit: in scope (RequireUnit), then UnitCheck when set.
func (e Endpoint[Req, Resp]) unit(r *http.Request, bu string) error {
	if err := RequireUnit(r, bu); err != nil {
		return err
	}
	if e.UnitCheck != nil {
		return e.UnitCheck(r.Context(), bu)
	}
	return nil
}

// QueryUnit is the prelude of a Raw route whose business unit is named by ?businessUnitId=
// and that reads nothing else from the query string, in the order an Endpoint with UnitQuery
// keeps: an unknown query parameter is 400, a unit outside the caller's scope 404
// (RequireUnit), then check (nil: none) refuses a unit that does not exist. It answers the
// unit.
func QueryUnit(r *http.Request, check func(ctx context.Context, businessUnitID string) error) (string, error) {
	q := NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId"); err != nil {
		return "", err
	}
	bu := q.String("businessUnitId")
	if err := RequireUnit(r, bu); err != nil {
		return "", err
	}
	if check != nil {
		if err := check(r.Context(), bu); err != nil {
			return "", err
		}
	}
	return bu, nil
}

// Raw is a route that answers by itself (a stream, a file, a redirect): Mount wraps it in
// API.Handler like an Endpoint, and its Meta names only method and path, with Statuses for
// the metadata check.
type Raw struct {
	Method, Path string
	Body         bool
	Statuses     []int
	Handler      HandlerFunc
}

// Meta implements Route.
func (x Raw) Meta() Meta {
	st := x.Statuses
	if len(st) == 0 {
		st = []int{http.StatusOK}
	}
	return Meta{Method: x.Method, Path: x.Path, Body: x.Body, Statuses: st}
}

// Serve implements Route.
func (x Raw) Serve(w http.ResponseWriter, r *http.Request) error { return x.Handler(w, r) }

// Mount registers every route on reg through api.Handler (authentication, scope, body
// bound, Idempotency-Key, problem details), each under its pattern "METHOD /path".
func Mount(reg Registrar, api *API, routes ...Route) {
	for _, rt := range routes {
		reg.RegisterHTTP(rt.Meta().Pattern(), api.Handler(rt.Serve))
	}
}

// Patterns lists the routes' patterns "METHOD /path", for checks against a router or a document.
func Patterns(routes []Route) []string {
	out := make([]string, 0, len(routes))
	for _, rt := range routes {
		out = append(out, rt.Meta().Pattern())
	}
	return out
}

// Metas lists the routes' metadata.
func Metas(routes []Route) []Meta {
	out := make([]Meta, 0, len(routes))
	for _, rt := range routes {
		out = append(out, rt.Meta())
	}
	return out
}
