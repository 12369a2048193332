package supportclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/automation-platform/automation/shared/api/supportapi"
	"github.com/automation-platform/automation/shared/api/supportapi/supportclient"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/support"
)

// seen is one request as the test server got it.
type seen struct {
	method, path, rawPath string
	query                 url.Values
	header                http.Header
	body                  string
}

// server answers each request with answer(r) and records it.
func server(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (*supportclient.Client, func() []seen) {
	t.Helper()
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.URL.EscapedPath(), r.URL.Query(), r.Header.Clone(), string(b)})
		mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	c := &supportclient.Client{BaseURL: srv.URL + "/", Token: "tok", FunctionKey: "fk", Operator: "Dana Support", BusinessUnits: "bu-syd,bu-hcm", HTTP: srv.Client()}
	return c, func() []seen { mu.Lock(); defer mu.Unlock(); return append([]seen(nil), got...) }
}

func okJSON(body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

func TestFindSendsFiltersCredentialsAndScope(t *testing.T) {
	t.Parallel()
	c, got := server(t, okJSON(`{"rows":[],"order":"newest"}`))
	a, err := c.Find(context.Background(), supportclient.FindQuery{Query: support.Query{SchedulerKey: "reminder:k",
		SourceType: "PoliceVetting", SourceGuid: "g-1", BusinessUnitID: "bu-syd", OnHold: "true", ScheduledFrom: "2026-11-01T00:00:00Z"}, Limit: 5})
	if err != nil || string(a.Body) != `{"rows":[],"order":"newest"}` {
		t.Fatalf("%q %v", a.Body, err)
	}
	r := got()[0]
	want := url.Values{"schedulerKey": {"reminder:k"}, "sourceType": {"PoliceVetting"}, "sourceGuid": {"g-1"}, "businessUnitId": {"bu-syd"},
		"onHold": {"true"}, "scheduledFrom": {"2026-11-01T00:00:00Z"}, "limit": {"5"}}
	if r.method != http.MethodGet || r.path != supportapi.Prefix+"scheduler-rows" || r.query.Encode() != want.Encode() {
		t.Errorf("%s %s ? %s", r.method, r.path, r.query.Encode())
	}
	for k, v := range map[string]string{"Authorization": "Bearer tok", "x-functions-key": "fk", httpapi.HeaderOperator: "Dana Support",
		httpapi.HeaderBusinessUnits: "bu-syd,bu-hcm", "Accept": "application/json", "Content-Type": ""} {
		if r.header.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, r.header.Get(k), v)
		}
	}
	// An empty query sends no "?" and no empty filters; no credentials send no headers.
	c2 := *c
	c2.Token, c2.FunctionKey, c2.Operator, c2.BusinessUnits = "", "", "", ""
	if _, err := c2.Metrics(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	r = got()[1]
	if r.path != supportapi.Prefix+"metrics" || len(r.query) != 0 || r.header.Get("Authorization") != "" || r.header.Get("x-functions-key") != "" ||
		r.header.Get(httpapi.HeaderOperator) != "" || r.header.Get(httpapi.HeaderBusinessUnits) != "" {
		t.Errorf("%s %v %v", r.path, r.query, r.header)
	}
}

func TestActReadsTheVersionThenSendsIfMatch(t *testing.T) {
	t.Parallel()
	c, got := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			httpapi.SetETag(w, 7)
		}
		okJSON(`{"action":"retry"}`)(w, r)
	})
	if _, err := c.Act(context.Background(), "retry", "a/b 1", 0, "fixed the address"); err != nil {
		t.Fatal(err)
	}
	rs := got()
	if len(rs) != 2 {
		t.Fatalf("%d requests", len(rs))
	}
	get, post := rs[0], rs[1]
	if get.method != http.MethodGet || get.rawPath != supportapi.Prefix+"scheduler-rows/a%2Fb%201" {
		t.Errorf("read: %s %s", get.method, get.rawPath)
	}
	var body supportapi.ActBody
	_ = json.Unmarshal([]byte(post.body), &body)
	if post.method != http.MethodPost || post.rawPath != supportapi.Prefix+"scheduler-rows/a%2Fb%201/retry" || post.header.Get("If-Match") != `"7"` ||
		post.header.Get("Content-Type") != "application/json" || body.Reason != "fixed the address" {
		t.Errorf("act: %s %s If-Match %q %q", post.method, post.rawPath, post.header.Get("If-Match"), post.body)
	}
	// A version given is sent as it is, without reading.
	if _, err := c.Act(context.Background(), "cancel", "42", 3, "dup"); err != nil {
		t.Fatal(err)
	}
	if rs := got(); len(rs) != 3 || rs[2].header.Get("If-Match") != `"3"` || rs[2].path != supportapi.Prefix+"scheduler-rows/42/cancel" {
		t.Errorf("%+v", rs[2:])
	}
}

func TestActWithoutAUsableETagSendsNothing(t *testing.T) {
	t.Parallel()
	c, got := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `W/"x"`)
		okJSON(`{}`)(w, r)
	})
	_, err := c.Act(context.Background(), "release", "42", 0, "r")
	if err == nil || err.Error() != `the API sent no usable ETag ("W/\"x\"")` || len(got()) != 1 {
		t.Fatalf("%v, %d requests", err, len(got()))
	}
}

func TestAPIErrorRendersProblemDetailsEscaped(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"problem with field errors", http.StatusUnprocessableEntity,
			`{"title":"Invalid \u001b[31mrequest","status":422,"detail":"reason is required","errors":[{"field":"reason","message":"reason is required"},{"field":"version\u202e","message":"must be\npositive"}]}`,
			"422 Invalid \\x1b[31mrequest: reason is required\n  version\\u202e: must be\\npositive"},
		{"no problem details", http.StatusBadGateway, "upstream\tdown\n", "502 Bad Gateway: upstream\\tdown"},
	}
	for _, tc := range cases {
		c, _ := server(t, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(tc.status)
			_, _ = io.WriteString(w, tc.body)
		})
		_, err := c.Show(context.Background(), "1")
		var ae *supportclient.APIError
		if !errors.As(err, &ae) || ae.Status != tc.status || err.Error() != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, err, tc.want)
		}
	}
}

func TestPrinterEscapesTablesAndIndentsJSON(t *testing.T) {
	t.Parallel()
	body := []byte(`{"rows":[{"id":3,"status":"Pending","businessUnitId":"bu\u001b]0;x","schedulerKey":"k\tk","version":2}],"order":"newest","nextCursor":"c\n1"}`)
	var out bytes.Buffer
	if err := (&supportclient.Printer{W: &out}).Find(supportclient.Answer{Body: body}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{`bu\x1b]0;x`, `k\tk`, "1 row(s), newest first\n", "more: add -cursor c\\n1\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
	if strings.ContainsAny(s, "\x1b") {
		t.Errorf("raw escape written:\n%q", s)
	}
	out.Reset()
	if err := (&supportclient.Printer{W: &out, JSON: true}).Metrics(supportclient.Answer{Body: []byte(`{"failed":1}`)}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "{\n  \"failed\": 1\n}\n" {
		t.Errorf("%q", out.String())
	}
	if err := (&supportclient.Printer{W: &out}).Show(supportclient.Answer{Body: []byte(`not json`)}); err == nil {
		t.Error("an unreadable answer rendered")
	}
}

func TestClean(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain text, ünïcode":  "plain text, ünïcode",
		"a\x1b[2Jb":            `a\x1b[2Jb`,
		"rtl\u202eoverride":    `rtl\u202eoverride`,
		"isolate\u2066x\u2069": `isolate\u2066x\u2069`,
		"bad \xff byte":        "bad \ufffd byte", // the invalid byte is shown as U+FFFD, never written raw
		"line\nbreak":          `line\nbreak`,
	} {
		if got := supportclient.Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}
