package httpapi_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// Regression tests from a hostile review of the HTTP layer: each names the attack.

// A query string that url.ParseQuery rejects (bad escape, ';' separator) was silently
// dropped by r.URL.Query(), so "?limit=%zz" or "?businessUnitId=a;b" answered as if no
// filter had been given.
func TestMalformedQueryStringIsRejected(t *testing.T) {
	t.Parallel()
	h := httpapi.New(httpapi.Options{}).Handler(echo)
	for _, target := range []string{"/api/x?limit=%zz", "/api/x?limit=1;businessUnitId=a", "/api/x?%gg=1"} {
		rr := do(t, h, "GET", target, "", nil)
		if rr.Code != 400 || rr.Header().Get("Content-Type") != httpapi.ProblemContentType || !strings.Contains(rr.Body.String(), "query") {
			t.Errorf("%s: %d %s", target, rr.Code, rr.Body)
		}
	}
	if rr := do(t, h, "GET", "/api/x?limit=1&businessUnitId=a%2Cb&empty=", "", nil); rr.Code != 200 {
		t.Errorf("well-formed query: %d %s", rr.Code, rr.Body)
	}
}

// Duplicate member names were accepted (the last one won), so a body could say two things
// at once ({"id":"a","id":"b"}: a proxy or log reader sees "a", we stored "b"); invalid
// UTF-8 was silently replaced by U+FFFD and stored. Both are malformed JSON for an API
// (RFC 8259 sections 4 and 8.1; I-JSON, RFC 7493 sections 2.1 and 2.3).
func TestDecodeJSONRejectsDuplicateNamesAndInvalidUTF8(t *testing.T) {
	t.Parallel()
	type inner struct {
		Field string `json:"field"`
	}
	type nested struct {
		Name  string            `json:"name"`
		In    inner             `json:"in"`
		List  []inner           `json:"list"`
		Extra map[string]string `json:"extra"`
	}
	cases := []struct{ name, body, field string }{
		{"top level", `{"name":"a","name":"b"}`, "name"},
		{"nested object", `{"in":{"field":"a","field":"b"}}`, "in.field"},
		{"in an array", `{"list":[{"field":"a"},{"field":"a","field":"b"}]}`, "list[1].field"},
		{"map", `{"extra":{"k":"1","k":"2"}}`, "extra.k"},
		{"escaped spelling", `{"name":"a","n\u0061me":"b"}`, "name"},
		{"other letter case", `{"name":"a","NAME":"b"}`, "NAME"},
		{"deep path", `{"list":[{"field":"a"}],"in":{"field":"x","Field":"y"}}`, "in.Field"},
	}
	for _, c := range cases {
		var v nested
		err := httpapi.DecodeJSONBytes([]byte(c.body), &v)
		var e *automation.Error
		if !errors.As(err, &e) || e.Code != automation.CodeMalformed || e.Field != c.field {
			t.Errorf("%s: err = %#v, want Malformed about %q", c.name, err, c.field)
		}
	}
	var v nested
	if err := httpapi.DecodeJSONBytes([]byte(`{"name":"a","in":{"field":"name"},"list":[{"field":"a"},{"field":"a"}],"extra":{"name":"x","field":"y"}}`), &v); err != nil {
		t.Errorf("equal names at different levels are fine: %v", err)
	}
	for name, body := range map[string]string{
		"invalid byte in a value": "{\"name\":\"a\xff\"}",
		"invalid byte in a name":  "{\"na\xfeme\":\"a\"}",
		"truncated sequence":      "{\"name\":\"\xe2\x82\"}",
	} {
		var v nested
		err := httpapi.DecodeJSONBytes([]byte(body), &v)
		if automation.CodeOf(err) != automation.CodeMalformed || !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("%s: err = %v, want Malformed about UTF-8", name, err)
		}
	}
	if err := httpapi.DecodeJSONBytes([]byte(`{"name":"Hồ Chí Minh \ud83d\ude00"}`), &v); err != nil || v.Name != "Hồ Chí Minh 😀" {
		t.Errorf("valid UTF-8: %q %v", v.Name, err)
	}
}

// A lone surrogate escape was decoded to U+FFFD and stored: every strict body refuses it,
// in a value and in a name; a pair and an escaped backslash before "u" are text.
func TestDecodeJSONRefusesLoneSurrogates(t *testing.T) {
	t.Parallel()
	type body struct {
		Name string `json:"name"`
	}
	for _, doc := range []string{`{"name":"\ud800"}`, `{"name":"a\uDBFFb"}`, `{"name":"\udc00"}`, `{"name":"\ud800\u0041"}`,
		`{"name":"\ud800\ud800"}`, `{"na\ud800me":"x"}`} {
		var v body
		err := httpapi.DecodeJSONBytes([]byte(doc), &v)
		if automation.CodeOf(err) != automation.CodeMalformed || !strings.Contains(err.Error(), "surrogate") {
			t.Errorf("%s: err = %v, want Malformed about a lone surrogate", doc, err)
		}
	}
	for doc, want := range map[string]string{`{"name":"\ud83d\ude00"}`: "😀", `{"name":"\\ud800"}`: `\ud800`, `{"name":"\"\\\ud83d\ude00"}`: `"\😀`} {
		var v body
		if err := httpapi.DecodeJSONBytes([]byte(doc), &v); err != nil || v.Name != want {
			t.Errorf("%s: %q %v, want %q", doc, v.Name, err, want)
		}
	}
}

// A 4xx built from a store error carried the store's text: ErrConflict and ErrLeaseLost
// wrapped by sqlstore ("sqlite BusinessUnitInsert \"bu-x\": conflict"), an automation.Error
// whose Err is the store error (support actions), or an automation.Error wrapped with
// internal context. The detail is the message written for the client, nothing below it.
func TestProblemDetailNeverCarriesInternalErrorText(t *testing.T) {
	t.Parallel()
	internal := []string{"sqlite", "mssql", "BusinessUnitInsert", "SupportSchedulerAct", "db01", "/var/lib"}
	cases := []struct {
		err    error
		status int
		detail string
	}{
		{fmt.Errorf("sqlite BusinessUnitInsert %q: %w", "bu-x", store.ErrConflict), 409, "conflicts"},
		{fmt.Errorf("mssql BusinessUnitUpdate %q at version 3 (stored 4): %w", "bu-x", store.ErrLeaseLost), 412, "changed"},
		{fmt.Errorf("sqlite open /var/lib/automation.db: %w", store.ErrNotFound), 404, "not found"},
		{&automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "the row changed while the action was applied; read it again",
			Err: fmt.Errorf("sqlite SupportSchedulerAct: %w", store.ErrLeaseLost)}, 412, "If-Match: the row changed while the action was applied; read it again"},
		{fmt.Errorf("mssql at db01: %w", automation.Invalid("name", "is required")), 422, "name: is required"},
		{&automation.Error{Code: automation.CodeConflict, Message: "business unit is busy", Err: errors.New("mssql deadlock at db01")}, 409, "business unit is busy"},
	}
	for _, c := range cases {
		rr := httptest.NewRecorder()
		httpapi.WriteError(rr, httptest.NewRequest("POST", "/api/x", nil), nil, c.err)
		p := httpapi.ProblemOf(c.err)
		if rr.Code != c.status || p.Status != c.status || !strings.Contains(p.Detail, c.detail) {
			t.Errorf("%v: %d %+v, want %d with detail %q", c.err, rr.Code, p, c.status, c.detail)
		}
		for _, word := range internal {
			if strings.Contains(rr.Body.String(), word) {
				t.Errorf("%v: the answer leaks %q: %s", c.err, word, rr.Body)
			}
		}
	}
}

// A body over the limit answered 400 Malformed from httpapi (read while decoding, or by
// the Idempotency-Key middleware) but 413 from funchost when Content-Length announced it:
// the same request got two statuses. It is 413 Content Too Large (RFC 9110 section 15.5.14) in
// every case, announced or chunked, and the handler does not run when the length is
// announced.
func TestBodyOverTheLimitIs413(t *testing.T) {
	t.Parallel()
	api, _ := idempotentAPI(t)
	small := httpapi.New(httpapi.Options{MaxBodyBytes: 64})
	var ran atomic.Int32
	decode := func(w http.ResponseWriter, r *http.Request) error {
		ran.Add(1)
		var b body
		if err := httpapi.DecodeJSON(r, &b); err != nil {
			return err
		}
		httpapi.WriteJSON(w, 200, b)
		return nil
	}
	big := `{"name":"` + strings.Repeat("x", 2<<20) + `"}`
	check := func(name string, rr *httptest.ResponseRecorder) {
		t.Helper()
		if rr.Code != http.StatusRequestEntityTooLarge || rr.Header().Get("Content-Type") != httpapi.ProblemContentType ||
			!strings.Contains(rr.Body.String(), `"code":"ContentTooLarge"`) {
			t.Errorf("%s: %d %s", name, rr.Code, rr.Body)
		}
	}
	// Announced length: refused before the handler runs.
	check("announced", do(t, small.Handler(decode), "POST", "/api/x", `{"name":"`+strings.Repeat("x", 100)+`"}`, nil))
	if ran.Load() != 0 {
		t.Errorf("the handler ran %d times for an announced body over the limit", ran.Load())
	}
	// Unknown length (chunked): found while reading.
	chunked := func(h http.Handler, body string, headers map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/api/x", io.MultiReader(strings.NewReader(body)))
		r.ContentLength = -1
		for k, v := range headers {
			r.Header.Set(k, v)
		}
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, r)
		return rr
	}
	check("chunked", chunked(api.Handler(decode), big, nil))
	check("chunked with Idempotency-Key", chunked(api.Handler(decode), big, map[string]string{"Idempotency-Key": "big"}))
	// An optional body is bounded the same way.
	optional := func(w http.ResponseWriter, r *http.Request) error {
		var b body
		if err := httpapi.DecodeOptionalJSON(r, &b); err != nil {
			return err
		}
		httpapi.WriteJSON(w, 200, b)
		return nil
	}
	check("optional body", chunked(small.Handler(optional), big, nil))
	if rr := chunked(small.Handler(optional), "", nil); rr.Code != 200 {
		t.Errorf("empty optional body: %d %s", rr.Code, rr.Body)
	}
	if rr := chunked(small.Handler(optional), `{"nmae":"x"}`, nil); rr.Code != 400 {
		t.Errorf("an optional body is strict when present, also chunked: %d %s", rr.Code, rr.Body)
	}
	if rr := do(t, small.Handler(optional), "POST", "/api/x", `{"name":"x"}`, map[string]string{"Content-Type": "text/plain"}); rr.Code != 415 {
		t.Errorf("an optional body with a wrong Content-Type: %d %s", rr.Code, rr.Body)
	}
}

// An attempt whose lease ran out and was taken over released the key when it then failed
// (any error answer releases): the retry that owned the key was still running, and a third
// request with the key started a second concurrent run of the handler. Complete and Release
// are fenced by the lease the attempt was given.
func TestIdempotencyStaleAttemptCannotReleaseATakenOverKey(t *testing.T) {
	t.Parallel()
	api, clk := idempotentAPI(t)
	var (
		attempts   atomic.Int32
		running    atomic.Int32
		maxRunning atomic.Int32
	)
	gates := []chan struct{}{make(chan struct{}), make(chan struct{})}
	entered := make(chan int, 3)
	h := api.Handler(func(w http.ResponseWriter, r *http.Request) error {
		n := int(attempts.Add(1))
		if cur := running.Add(1); cur > maxRunning.Load() {
			maxRunning.Store(cur)
		}
		defer running.Add(-1)
		entered <- n
		if n <= len(gates) {
			<-gates[n-1]
		}
		if n == 1 {
			return automation.Invalid("name", "the first attempt fails late") // a 4xx: released
		}
		httpapi.WriteJSON(w, 201, map[string]int{"attempt": n})
		return nil
	})
	key := map[string]string{"Idempotency-Key": "fenced"}
	results := make(chan *httptest.ResponseRecorder, 2)
	go func() { results <- do(t, h, "POST", "/api/things", `{}`, key) }() // A
	<-entered
	clk.add(2 * time.Minute)                                              // A's lease runs out
	go func() { results <- do(t, h, "POST", "/api/things", `{}`, key) }() // B takes over
	<-entered
	close(gates[0]) // A fails now, while B owns the key
	if a := <-results; a.Code != 422 {
		t.Fatalf("A: %d %s", a.Code, a.Body)
	}
	c := do(t, h, "POST", "/api/things", `{}`, key)
	if c.Code != 409 || attempts.Load() != 2 {
		t.Fatalf("C while B owns the key: %d %s, handler attempts %d (max %d at once), want 409 and 2",
			c.Code, c.Body, attempts.Load(), maxRunning.Load())
	}
	close(gates[1])
	if b := <-results; b.Code != 201 {
		t.Fatalf("B: %d %s", b.Code, b.Body)
	}
	if d := do(t, h, "POST", "/api/things", `{}`, key); d.Code != 201 || d.Header().Get(httpapi.HeaderIdempotentReplayed) != "true" ||
		!strings.Contains(d.Body.String(), `"attempt":2`) {
		t.Fatalf("after B: %d %v %s, want B's answer replayed", d.Code, d.Header(), d.Body)
	}
}

// countingWriter is a ResponseWriter that counts the body bytes it received.
type countingWriter struct {
	header http.Header
	status int
	n      atomic.Int64
}

func (c *countingWriter) Header() http.Header { return c.header }
func (c *countingWriter) WriteHeader(s int) {
	if c.status == 0 {
		c.status = s
	}
}
func (c *countingWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = 200
	}
	c.n.Add(int64(len(p)))
	return len(p), nil
}

// A handler answering a huge body under an Idempotency-Key was buffered whole in memory
// (only its storage was bounded). Past the storage limit the answer now streams to the
// client while the handler writes, and is not stored (a retry runs the request again).
func TestIdempotentHugeResponseStreamsInBoundedMemory(t *testing.T) {
	t.Parallel()
	api, _ := idempotentAPI(t)
	const chunk, chunks = 32 << 10, 128 // 4 MiB
	var runs atomic.Int32
	cw := &countingWriter{header: http.Header{}}
	var seenWhileWriting int64
	h := api.Handler(func(w http.ResponseWriter, r *http.Request) error {
		runs.Add(1)
		w.Header().Set("Content-Type", "text/csv")
		w.WriteHeader(200)
		p := []byte(strings.Repeat("x", chunk-1) + "\n")
		for i := range chunks {
			_, _ = w.Write(p)
			if i == chunks/2 {
				seenWhileWriting = cw.n.Load()
			}
		}
		return nil
	})
	r := httptest.NewRequest("POST", "/api/export", strings.NewReader(`{}`))
	r.Header.Set("Idempotency-Key", "huge")
	h.ServeHTTP(cw, r)
	if cw.status != 200 || cw.n.Load() != chunk*chunks || cw.header.Get("Content-Type") != "text/csv" {
		t.Fatalf("answer: %d, %d bytes, %v", cw.status, cw.n.Load(), cw.header)
	}
	if seenWhileWriting < chunk*chunks/4 {
		t.Fatalf("the client had %d bytes when the handler had written %d: the answer is buffered, not streamed", seenWhileWriting, chunk*(chunks/2+1))
	}
	if rr := do(t, h, "POST", "/api/export", `{}`, map[string]string{"Idempotency-Key": "huge"}); rr.Code != 200 || runs.Load() != 2 ||
		rr.Header().Get(httpapi.HeaderIdempotentReplayed) != "" {
		t.Fatalf("a retry must run again (the answer was too large to store): %d, runs %d", rr.Code, runs.Load())
	}
}

// A handler that panicked after it had started its answer got a problem document appended
// to the partial body (a 200 with two JSON texts). The connection is aborted instead
// (http.ErrAbortHandler), and a handler's own ErrAbortHandler is passed on, not logged as
// a failure and answered 500.
func TestPanicAfterTheAnswerStartedAbortsIt(t *testing.T) {
	t.Parallel()
	api := httpapi.New(httpapi.Options{})
	for name, h := range map[string]httpapi.HandlerFunc{
		"partial answer": func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"items":[`))
			panic("boom")
		},
		"abort": func(http.ResponseWriter, *http.Request) error { panic(http.ErrAbortHandler) },
	} {
		rr := httptest.NewRecorder()
		var got any
		func() {
			defer func() { got = recover() }()
			api.Handler(h).ServeHTTP(rr, httptest.NewRequest("GET", "/api/x", nil))
		}()
		if got != http.ErrAbortHandler || strings.Contains(rr.Body.String(), "problems") {
			t.Errorf("%s: recovered %v, body %q; want the ErrAbortHandler panic and no problem appended", name, got, rr.Body)
		}
	}
}

// If-Match accepted tags that ETag never writes ("007", "+7" for version 7: a strong
// comparison says they differ), and a second If-Match header line was ignored (header
// lines are one comma-separated list, RFC 9110 section 5.3, and lists are refused).
func TestIfMatchIsExactlyOneTagAsWritten(t *testing.T) {
	t.Parallel()
	for _, values := range [][]string{{`"007"`}, {`"+7"`}, {`"7"`, `"8"`}, {`"7"`, `"7"`}, {`""`}, {`"7 "`}} {
		r := httptest.NewRequest("PUT", "/", nil)
		for _, v := range values {
			r.Header.Add("If-Match", v)
		}
		if _, _, err := httpapi.IfMatch(r, true); automation.CodeOf(err) != automation.CodeMalformed {
			t.Errorf("If-Match %q: err = %v, want Malformed", values, err)
		}
	}
	r := httptest.NewRequest("PUT", "/", nil)
	r.Header.Set("If-Match", `"7"`)
	if v, ok, err := httpapi.IfMatch(r, true); v != 7 || !ok || err != nil {
		t.Errorf(`If-Match "7": %d %v %v`, v, ok, err)
	}
}

// Versions start at 1: If-Match "0" names no version any resource is at, and a store reads
// 0 as "unguarded" for its own writes, so "0" is refused (412) before any handler sees it.
func TestIfMatchZeroIsRefused(t *testing.T) {
	t.Parallel()
	for _, required := range []bool{true, false} {
		r := httptest.NewRequest("PUT", "/", nil)
		r.Header.Set("If-Match", `"0"`)
		if _, ok, err := httpapi.IfMatch(r, required); ok || automation.CodeOf(err) != automation.CodePreconditionFailed {
			t.Errorf(`If-Match "0" (required %v): ok %v err %v, want PreconditionFailed`, required, ok, err)
		}
	}
}

// The operator's name goes into audit records: bidirectional-text controls (U+202E and
// friends, format characters, not control characters) could make an audit line read as
// another name ("Trojan Source"). They are removed like control characters.
func TestOperatorNameDropsBidiControls(t *testing.T) {
	t.Parallel()
	h := httpapi.New(httpapi.Options{}).Handler(echo)
	rr := do(t, h, "GET", "/api/x", "", map[string]string{"X-Automation-Operator": "ana\u202egnalam\u2066\u200f Nguyễn"})
	if !strings.Contains(rr.Body.String(), `"operator":"anagnalam Nguyễn"`) {
		t.Fatalf("%s", rr.Body)
	}
}
