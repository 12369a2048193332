package openapitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
)

// Doc is one parsed OpenAPI document, its source text and its validator.
type Doc struct {
	raw string
	doc libopenapi.Document
	v   validator.Validator
}

// Load parses raw (YAML or JSON) and builds its validator; a document that does not parse,
// or a validator that cannot be built, fails t at once.
func Load(t testing.TB, raw []byte) *Doc {
	t.Helper()
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	return &Doc{raw: string(raw), doc: doc, v: v}
}

// LoadFile is Load of the file at path (relative to the test's package directory).
func LoadFile(t testing.TB, path string) *Doc {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Load(t, raw)
}

// Edit loads a copy of the document changed by edit (a deliberate mismatch); an edit that
// changes nothing fails t, so a check built on it cannot pass vacuously.
func (d *Doc) Edit(t testing.TB, edit func(string) string) *Doc {
	t.Helper()
	edited := edit(d.raw)
	if edited == d.raw {
		t.Fatal("the edit of the OpenAPI document did not apply")
	}
	return Load(t, []byte(edited))
}

// Document is the parsed document, for checks of an adapter's own conventions.
func (d *Doc) Document() libopenapi.Document { return d.doc }

// CheckDocument fails t unless the document declares OpenAPI 3.1.0 and is valid; each
// problem of the document is reported.
func (d *Doc) CheckDocument(t testing.TB) {
	t.Helper()
	if v := d.doc.GetVersion(); v != "3.1.0" {
		t.Fatalf("OpenAPI version %q", v)
	}
	if ok, errs := d.v.ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("document: %s %s", e.Message, e.Reason)
		}
	}
}

// Routes lists "METHOD /path" (method upper case) for every operation, sorted.
func (d *Doc) Routes(t testing.TB) []string {
	t.Helper()
	model, err := d.doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(out)
	return out
}

// CheckRoutes fails t unless the document's operations are exactly registered (router
// patterns "METHOD /path", any order), naming each one only one side has; what names the
// registered side in the message ("the router", "the runtime's /api/x routes").
func (d *Doc) CheckRoutes(t testing.TB, what string, registered []string) {
	t.Helper()
	if diff := RouteDiff(d.Routes(t), registered); diff != "" {
		t.Fatalf("the OpenAPI document and %s differ:\n%s", what, diff)
	}
}

// CheckRenameCaught proves CheckRoutes can fail: a copy of the document whose operation
// "from path" is renamed to "to path" (methods lower case, as written under the path key
// indented two spaces) must differ from registered both ways.
func (d *Doc) CheckRenameCaught(t testing.TB, registered []string, path, from, to string) {
	t.Helper()
	renamed := d.Edit(t, func(s string) string {
		return strings.Replace(s, "  "+path+":\n    "+from+":", "  "+path+":\n    "+to+":", 1)
	})
	diff := RouteDiff(renamed.Routes(t), registered)
	if !strings.Contains(diff, "documented but not registered: "+strings.ToUpper(to)+" "+path) ||
		!strings.Contains(diff, "registered but not documented: "+strings.ToUpper(from)+" "+path) {
		t.Fatalf("a renamed operation was not caught:\n%s", diff)
	}
}

// Endpoint is what an endpoint declares about itself (httpapi.Meta): its pattern
// "METHOD /path", whether it reads a request body, and its success statuses.
type Endpoint interface {
	Pattern() string
	ReadsBody() bool
	Answers() []int
}

// CheckEndpoints fails t unless every declared endpoint (httpapi.Meta, seen through the
// Endpoint interface: this package sits beside httpapi and may not import it) agrees with its
// operation in the document: the operation "METHOD path" exists, it has a requestBody
// exactly when the endpoint reads a body, and each success status the endpoint answers is a
// documented response. Each disagreement is named.
func CheckEndpoints[E Endpoint](t testing.TB, d *Doc, metas []E) {
	t.Helper()
	for _, msg := range EndpointDiff(t, d, metas) {
		t.Error(msg)
	}
}

// EndpointDiff lists the disagreements CheckEndpoints reports, one a string (none: nil).
func EndpointDiff[E Endpoint](t testing.TB, d *Doc, metas []E) []string {
	t.Helper()
	model, err := d.doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, m := range metas {
		method, path, _ := strings.Cut(m.Pattern(), " ")
		item, ok := model.Model.Paths.PathItems.Get(path)
		if !ok {
			msgs = append(msgs, m.Pattern()+": not documented")
			continue
		}
		op, ok := item.GetOperations().Get(strings.ToLower(method))
		if !ok {
			msgs = append(msgs, m.Pattern()+": not documented")
			continue
		}
		if has := op.RequestBody != nil; has != m.ReadsBody() {
			msgs = append(msgs, fmt.Sprintf("%s: the endpoint reads a body: %t, the document has a requestBody: %t", m.Pattern(), m.ReadsBody(), has))
		}
		for _, st := range m.Answers() {
			if op.Responses == nil || op.Responses.FindResponseByCode(st) == nil {
				msgs = append(msgs, fmt.Sprintf("%s: answers %d, not a documented response", m.Pattern(), st))
			}
		}
	}
	return msgs
}

// CheckRouter is an adapter's router-versus-document check in one call: the document is
// valid OpenAPI 3.1 (CheckDocument); its operations are exactly registered, the patterns the
// adapter's Register adds to a router of its own, and exactly the runtime's patterns under
// prefix (runtime: every pattern of the runtime's router), both ways (CheckRoutes); and the
// operation "from renamePath" renamed to "to" is caught both ways (CheckRenameCaught).
func (d *Doc) CheckRouter(t testing.TB, registered, runtime []string, prefix, renamePath, from, to string) {
	t.Helper()
	d.CheckRegistered(t, registered, renamePath, from, to)
	d.CheckRoutes(t, "the runtime's "+prefix+" routes", Under(runtime, prefix))
}

// CheckRegistered is CheckRouter without the runtime, for an adapter tested on a router of
// its own: the document is valid OpenAPI 3.1, its operations are exactly registered (both
// ways), and the operation "from renamePath" renamed to "to" is caught.
func (d *Doc) CheckRegistered(t testing.TB, registered []string, renamePath, from, to string) {
	t.Helper()
	d.CheckDocument(t)
	d.CheckRoutes(t, "the router", registered)
	d.CheckRenameCaught(t, registered, renamePath, from, to)
}

// RouteDiff names, one a line, the routes only one side has ("" when both list the same).
func RouteDiff(documented, registered []string) string {
	var msgs []string
	for _, d := range documented {
		if !slices.Contains(registered, d) {
			msgs = append(msgs, "documented but not registered: "+d)
		}
	}
	for _, r := range registered {
		if !slices.Contains(documented, r) {
			msgs = append(msgs, "registered but not documented: "+r)
		}
	}
	return strings.Join(msgs, "\n")
}

// Under keeps the patterns ("METHOD /path") whose path starts with prefix, sorted: an
// adapter's share of a runtime's router.
func Under(patterns []string, prefix string) []string {
	var out []string
	for _, p := range patterns {
		if _, path, _ := strings.Cut(p, " "); strings.HasPrefix(path, prefix) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// Answer is the *http.Response the validator reads for a recorded answer to req.
func Answer(req *http.Request, code int, header http.Header, body []byte) *http.Response {
	return &http.Response{StatusCode: code, Header: header, Body: io.NopCloser(bytes.NewReader(body)), Request: req}
}

// Mismatch returns why the exchange does not match the document, one problem a line ("" when
// it does). Below 400 the request and the answer are checked against their operation; from
// 400 on only the answer, which must be documented for that status. It reads req's and
// res's bodies.
func (d *Doc) Mismatch(req *http.Request, res *http.Response) string {
	var ok bool
	var errs []*verrors.ValidationError
	if res.StatusCode < 400 {
		ok, errs = d.v.ValidateHttpRequestResponse(req, res)
	} else {
		ok, errs = d.v.ValidateHttpResponse(req, res)
	}
	if ok {
		return ""
	}
	var msgs []string
	for _, ve := range errs {
		msgs = append(msgs, ve.Message+": "+ve.Reason)
		for _, se := range ve.SchemaValidationErrors {
			msgs = append(msgs, "  "+se.FieldPath+" ("+se.KeywordLocation+"): "+se.Reason)
		}
	}
	if len(msgs) == 0 {
		return "refused without a reason"
	}
	return strings.Join(msgs, "\n")
}

// Validate reports on t (Errorf, the test goes on) an exchange that does not match the
// document (see Mismatch), with the answer's body (at most 2000 bytes).
func (d *Doc) Validate(t testing.TB, req *http.Request, res *http.Response) {
	t.Helper()
	var body []byte
	if res.Body != nil {
		body, _ = io.ReadAll(res.Body)
		res.Body = io.NopCloser(bytes.NewReader(body))
	}
	if msg := d.Mismatch(req, res); msg != "" {
		t.Errorf("%s %s → %d does not match the OpenAPI document:\n%s\nbody: %.2000s", req.Method, req.URL.RequestURI(), res.StatusCode, msg, body)
	}
}

// Request builds a test request: method path, with body as JSON (Content-Type
// application/json) when it is not empty, and "Name: value" headers.
func Request(method, path, body string, headers ...string) *http.Request {
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, hv := range headers {
		k, v, _ := strings.Cut(hv, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return req
}

// Recorded is one answer a handler gave.
type Recorded struct {
	Code   int
	Header http.Header
	Body   []byte
}

// Want fails t at once unless the answer's status is code (the message names both and the
// body), and answers r for the checks that follow.
func (r Recorded) Want(t testing.TB, code int) Recorded {
	t.Helper()
	if r.Code != code {
		t.Fatalf("status %d, want %d: %s", r.Code, code, r.Body)
	}
	return r
}

// JSON decodes the answer's body into v; a body that is not JSON fails t at once (the
// message names the status and the body).
func (r Recorded) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("answer %d is not JSON: %v\n%s", r.Code, err, r.Body)
	}
}

// Call serves method path (with a JSON body when body is not empty, and "Name: value"
// headers) through h, validates the exchange against the document (Validate) and returns
// the answer. The request is built twice, once to serve and once to validate, because a
// body can be read only once.
func (d *Doc) Call(t testing.TB, h http.Handler, method, path, body string, headers ...string) Recorded {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, Request(method, path, body, headers...))
	r := Recorded{Code: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	req := Request(method, path, body, headers...)
	d.Validate(t, req, Answer(req, r.Code, r.Header, r.Body))
	return r
}

// Client is a document bound to the handler an API's requests go to (a runtime's Functions
// router, say): the rig of an API package's document tests, so that each call is checked
// against the document without naming the handler.
type Client struct {
	Doc     *Doc
	Handler http.Handler
}

// Call is Doc.Call against the client's handler: a 2xx must match its operation (parameters,
// body, headers, response schema); an error answer must be a documented problem of that
// status.
func (c Client) Call(t testing.TB, method, path, body string, headers ...string) Recorded {
	t.Helper()
	return c.Doc.Call(t, c.Handler, method, path, body, headers...)
}

// Expect is Call that also fails t unless the answer's status is want (the message names
// the request, its body and the answer).
func (c Client) Expect(t testing.TB, want int, method, path, body string, headers ...string) Recorded {
	t.Helper()
	r := c.Call(t, method, path, body, headers...)
	if r.Code != want {
		t.Fatalf("%s %s %s: %d %s, want %d", method, path, body, r.Code, r.Body, want)
	}
	return r
}

// Expecting is Expect bound to t: the call(want, method, path, body, headers...) of a
// document test.
func (c Client) Expecting(t testing.TB) func(want int, method, path, body string, headers ...string) Recorded {
	return func(want int, method, path, body string, headers ...string) Recorded {
		t.Helper()
		return c.Expect(t, want, method, path, body, headers...)
	}
}

// CheckCaught shows that a document check is real: the exchange (built afresh for each
// document, as a request's body is read once) matches d, and does not match broken, a copy
// of d edited (Edit) so that the exchange's answer no longer fits it.
func (d *Doc) CheckCaught(t testing.TB, broken *Doc, exchange func() (*http.Request, *http.Response)) {
	t.Helper()
	if msg := d.Mismatch(exchange()); msg != "" {
		t.Fatalf("the real document refused the answer: %s", msg)
	}
	if broken.Mismatch(exchange()) == "" {
		t.Fatal("the broken document accepted the answer")
	}
}
