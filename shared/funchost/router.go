package funchost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/telemetry"
)

// Handler handles one invocation of a non-HTTP function. Keep it thin: decode the trigger
// with inv.Timer or inv.ServiceBus, call one service, return its error.
type Handler func(ctx context.Context, inv *Invocation) (Result, error)

// DefaultMaxBodyBytes bounds invocation and forwarded request bodies (4 MiB: a Service
// Bus message of 256 KiB, JSON-escaped twice and repeated in Metadata, fits easily).
const DefaultMaxBodyBytes = 4 << 20

// RouterOptions configures a Router; nil or zero fields mean defaults.
type RouterOptions struct {
	// MaxBodyBytes bounds invocation bodies (POST /<FunctionName>) and, unless
	// MaxForwardedBodyBytes is set, forwarded HTTP bodies; larger requests get 413.
	// Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxForwardedBodyBytes bounds forwarded HTTP request bodies (/{prefix}/...) when it
	// differs from the invocations' bound: the largest any HTTP route accepts (each API
	// bounds its own routes below it). Default MaxBodyBytes.
	MaxForwardedBodyBytes int64
	// Logger receives handler failures (the host does not read non-2xx bodies, but it
	// captures the process's output). Default slog.Default().
	Logger *slog.Logger
	// HTTPRoutePrefix is host.json's extensions.http.routePrefix. Default "api". Forwarded
	// requests arrive on /{prefix}/...; an empty prefix is not supported because forwarded
	// paths would collide with /{FunctionName}.
	HTTPRoutePrefix string
	// InvocationTimeout, when positive, bounds each handler's context. The host's own
	// limit is functionTimeout (10 min in our host.json).
	InvocationTimeout time.Duration
}

// Router is the custom handler's http.Handler: GET / for readiness, POST /{FunctionName}
// for registered functions and /{HTTPRoutePrefix}/... for forwarded HTTP functions. The
// zero value is ready to use with default options. Register functions before serving.
type Router struct {
	opts RouterOptions

	mu       sync.RWMutex
	funcs    map[string]route // lower-cased name → route
	httpMux  *http.ServeMux
	patterns []string
}

type route struct {
	name string
	h    Handler
}

// NewRouter returns a Router with opts (nil means defaults).
func NewRouter(opts *RouterOptions) *Router {
	r := &Router{}
	if opts != nil {
		r.opts = *opts
	}
	return r
}

// functionNameRE is the host's function name rule (Utility.IsValidFunctionName).
var functionNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_\-]{0,127}$`)

// Register routes POST /{functionName} to h. Names are matched case-insensitively like
// the host does. It panics on an invalid or duplicate name or a nil handler, like
// http.ServeMux.
func (r *Router) Register(functionName string, h Handler) {
	if h == nil {
		panic("funchost: Register " + functionName + ": nil handler")
	}
	if !functionNameRE.MatchString(functionName) || strings.EqualFold(functionName, "host") {
		panic(fmt.Sprintf("funchost: Register: invalid function name %q", functionName))
	}
	if strings.EqualFold(functionName, r.prefix()) {
		panic(fmt.Sprintf("funchost: Register: function name %q collides with the HTTP route prefix", functionName))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := strings.ToLower(functionName)
	if old, dup := r.funcs[key]; dup {
		panic(fmt.Sprintf("funchost: Register: function %q already registered as %q", functionName, old.name))
	}
	if r.funcs == nil {
		r.funcs = map[string]route{}
	}
	r.funcs[key] = route{name: functionName, h: h}
}

// RegisterHTTP serves a forwarded HTTP function (enableForwardingHttpRequest) on its
// original path. pattern is an http.ServeMux pattern such as "POST /api/events" or
// "GET /api/support/{id}"; its path must start with /{HTTPRoutePrefix}/ and it must not
// name a host. Unknown paths under the prefix get a 404, wrong methods a 405 (with Allow),
// both as problem details (application/problem+json).
// Replies that set no Content-Type get application/json.
func (r *Router) RegisterHTTP(pattern string, h http.Handler) {
	if h == nil {
		panic("funchost: RegisterHTTP " + pattern + ": nil handler")
	}
	path := pattern
	if i := strings.IndexAny(pattern, " \t"); i >= 0 {
		path = strings.TrimLeft(pattern[i:], " \t")
	}
	p := "/" + r.prefix()
	if path != p && !strings.HasPrefix(path, p+"/") {
		panic(fmt.Sprintf("funchost: RegisterHTTP: pattern %q must start with %s/ (forwarded requests keep the route prefix)", pattern, p))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.httpMux == nil {
		r.httpMux = http.NewServeMux()
	}
	r.httpMux.Handle(pattern, forwarded{h: h, log: r.logger()})
	r.patterns = append(r.patterns, pattern)
}

// HTTPPatterns returns the patterns registered with RegisterHTTP, sorted (for drift tests
// between routes and the HTTP function folders that forward them).
func (r *Router) HTTPPatterns() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := slices.Clone(r.patterns)
	sort.Strings(out)
	return out
}

// Functions returns the registered function names, sorted.
func (r *Router) Functions() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.funcs))
	for _, rt := range r.funcs {
		names = append(names, rt.name)
	}
	sort.Strings(names)
	return names
}

func (r *Router) prefix() string {
	if p := strings.Trim(r.opts.HTTPRoutePrefix, "/"); p != "" {
		return p
	}
	return "api"
}

func (r *Router) maxBody() int64 {
	if r.opts.MaxBodyBytes > 0 {
		return r.opts.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

func (r *Router) maxForwardedBody() int64 {
	if r.opts.MaxForwardedBodyBytes > 0 {
		return r.opts.MaxForwardedBodyBytes
	}
	return r.maxBody()
}

func (r *Router) logger() *slog.Logger {
	if r.opts.Logger != nil {
		return r.opts.Logger
	}
	return slog.Default()
}

// ForwardedOnly returns a handler for a listener that anyone other than the Functions host
// can reach (local serve): it answers the readiness probe (GET /) and the forwarded HTTP
// routes (/{HTTPRoutePrefix}/..., which carry their own authentication and scope), and
// refuses every invocation path POST /{FunctionName} with 404 {"error": ...} as if no
// function had that name. Invocations carry neither a token nor a business-unit scope (the
// protocol trusts its only caller, the host), so they must never be reachable from such a
// listener; an in-process caller (the local host) invokes the Router itself.
func (r *Router) ForwardedOnly() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := req.URL.Path
		prefix := "/" + r.prefix()
		if p == "/" || p == prefix || strings.HasPrefix(p, prefix+"/") {
			r.ServeHTTP(w, req)
			return
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route %q (function invocations are not served on this listener)", p))
	})
}

// ServeHTTP implements http.Handler.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	p := req.URL.Path
	prefix := "/" + r.prefix()
	switch {
	case p == "/":
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "method "+req.Method+" not allowed on /")
			return
		}
		writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
	case p == prefix || strings.HasPrefix(p, prefix+"/"):
		r.serveForwarded(w, req)
	default:
		r.serveInvocation(w, req, strings.TrimPrefix(p, "/"))
	}
}

func (r *Router) serveInvocation(w http.ResponseWriter, req *http.Request, name string) {
	r.mu.RLock()
	rt, ok := r.funcs[strings.ToLower(name)]
	r.mu.RUnlock()
	if !ok || strings.Contains(name, "/") {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no function named %q", name))
		return
	}
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "functions are invoked with POST")
		return
	}
	max := r.maxBody()
	if req.ContentLength > max {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("invocation body exceeds %d bytes", max))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, max))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("invocation body exceeds %d bytes", max))
			return
		}
		writeError(w, http.StatusBadRequest, "reading invocation body: "+err.Error())
		return
	}
	invReq, err := DecodeInvocationRequest(body)
	if err != nil {
		r.logger().Warn("funchost: malformed invocation", "function", rt.name, "error", err)
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	inv := &Invocation{FunctionName: rt.name, InvocationID: req.Header.Get(InvocationIDHeader), Request: invReq}
	r.run(req.Context(), w, rt, inv, req.Header.Get(telemetry.HeaderTraceParent), req.Header.Get(telemetry.HeaderTraceState))
}

// run is an invocation once decoded: the handler under the invocation timeout, its span
// (parent: traceParent and traceState, the request's trace headers, unless a message's
// properties name one) and its reply on w (respond).
func (r *Router) run(ctx context.Context, w http.ResponseWriter, rt route, inv *Invocation, traceParent, traceState string) {
	if r.opts.InvocationTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.opts.InvocationTimeout)
		defer cancel()
	}
	ctx, span := invocationSpan(ctx, traceParent, traceState, inv)
	res, err := r.call(ctx, rt.h, inv)
	telemetry.End(span, err, automation.CodeString(err))
	r.respond(w, inv, res, err)
}

// Invoke runs the function named name (case-insensitive, as POST /{name}) with an invocation
// request already decoded, in process: what ServeHTTP does once it has read and decoded a
// POST /{name} body (the same handler, timeout, span, panic recovery and reply), without the
// HTTP round trip and the JSON encoding and decoding of the whole body. It returns the
// status and the body ServeHTTP would write. The embedded runtime's local host calls it
// (docs/performance.md, "The embedded host's invocations"); the Functions host always comes
// through ServeHTTP. req's Data and Metadata values are the binding values as the host
// encodes them (a Service Bus body JSON-encoded twice, metadata scalars as JSON strings:
// docs/functions-protocol.md); nil maps are taken as empty; req is not kept after the call.
// An unknown name answers 404 as ServeHTTP does.
func (r *Router) Invoke(ctx context.Context, name, invocationID string, req *InvocationRequest) (int, []byte) {
	w := &Reply{}
	r.mu.RLock()
	rt, ok := r.funcs[strings.ToLower(name)]
	r.mu.RUnlock()
	if !ok || strings.Contains(name, "/") {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no function named %q", name))
		return w.Status(), w.Body()
	}
	in := &InvocationRequest{Data: req.Data, Metadata: req.Metadata}
	if in.Data == nil {
		in.Data = map[string]json.RawMessage{}
	}
	if in.Metadata == nil {
		in.Metadata = map[string]json.RawMessage{}
	}
	r.run(ctx, w, rt, &Invocation{FunctionName: rt.name, InvocationID: invocationID, Request: in}, "", "")
	return w.Status(), w.Body()
}

// head is what an in-memory http.ResponseWriter keeps of a response's head: the header
// (made on first use) and the first status written, later ones ignored as net/http does.
type head struct {
	header http.Header
	code   int // 0 until a status or a body is written
}

func (h *head) Header() http.Header {
	if h.header == nil {
		h.header = http.Header{}
	}
	return h.header
}

func (h *head) WriteHeader(code int) {
	if h.code == 0 {
		h.code = code
	}
}

// Reply is an in-memory http.ResponseWriter: the header, status and body a handler wrote
// (200 when it wrote a body, or nothing, without a status, as net/http does). Invoke answers
// through one; a simulator that serves a handler in process (shared/replay) uses it where a
// test would use httptest.ResponseRecorder. Not safe for concurrent use.
type Reply struct {
	head
	body bytes.Buffer
}

func (p *Reply) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return p.body.Write(b)
}

// Status is the reply's status: 200 when nothing set one.
func (p *Reply) Status() int {
	if p.code == 0 {
		return http.StatusOK
	}
	return p.code
}

// Body is what was written (the buffer itself: valid until the next Write).
func (p *Reply) Body() []byte { return p.body.Bytes() }

// call runs h, turning a panic into an error so one bad message cannot stop the process.
func (r *Router) call(ctx context.Context, h Handler, inv *Invocation) (res Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			r.logger().Error("funchost: handler panicked", "function", inv.FunctionName,
				"invocationId", inv.InvocationID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			res, err = Result{}, fmt.Errorf("handler panicked: %v", v)
		}
	}()
	return h(ctx, inv)
}

// respond is the one place handler errors become replies (see the package doc).
//
// Outputs stay {} for functions without output bindings (every timer and Service Bus
// function here): the host matches Outputs keys to the function's output bindings, so
// invented keys are not an option. Host versions of 2024 log "Outputs not set on http
// response" and "ReturnValue not set on http response" at Warning level for such replies
// (DefaultHttpWorkerService.ProcessDefaultInvocationRequest; later versions log them at
// Debug) - about 17,000 lines a day with the 10 s and 30 s timers. host.json silences them
// with a logging filter: category
// Microsoft.Azure.WebJobs.Script.Workers.Http.DefaultHttpWorkerService at Error, the only
// category those two lines use (its other lines are Debug). Invocation failures are still
// logged by the host under the function's category. TestHostJSONFiltersReplyWarnings
// (shared/app) checks the filter.
func (r *Router) respond(w http.ResponseWriter, inv *Invocation, res Result, err error) {
	log := r.logger().With("function", inv.FunctionName, "invocationId", inv.InvocationID)
	switch {
	case err == nil:
		body, merr := json.Marshal(InvocationResponse{
			Outputs:     nonNilMap(res.Outputs),
			Logs:        nonNilLogs(res.Logs),
			ReturnValue: res.ReturnValue,
		})
		if merr != nil {
			log.Error("funchost: encoding the invocation response", "error", merr)
			writeError(w, http.StatusInternalServerError, "encoding the invocation response: "+merr.Error())
			return
		}
		writeJSON(w, http.StatusOK, body)
	case automation.IntentOf(err) == automation.IntentPermanent:
		// Outputs are dropped: the invocation failed, it is only acknowledged.
		log.Warn("funchost: permanent failure, acknowledged without retry", "error", err)
		logs := append(append([]string{}, res.Logs...), "permanent failure, not retried: "+err.Error())
		body, _ := json.Marshal(InvocationResponse{Outputs: map[string]any{}, Logs: logs})
		writeJSON(w, http.StatusOK, body)
	case automation.IntentOf(err) == automation.IntentRetryAfter:
		// An expected "not now" (another worker holds what the invocation needs): the same
		// 500, so the host redelivers, but nothing is wrong, so INFO rather than ERROR.
		log.Info("funchost: not now, retry after a while; the host will redeliver", "error", err)
		writeError(w, http.StatusInternalServerError, err.Error())
	default:
		log.Error("funchost: invocation failed; the host will retry", "error", err, "logs", res.Logs)
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

func (r *Router) serveForwarded(w http.ResponseWriter, req *http.Request) {
	r.mu.RLock()
	mux := r.httpMux
	r.mu.RUnlock()
	if mux == nil {
		writeProblem(w, http.StatusNotFound, "no HTTP function at "+req.URL.Path)
		return
	}
	max := r.maxForwardedBody()
	if req.ContentLength > max {
		writeProblem(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", max))
		return
	}
	req.Body = http.MaxBytesReader(w, req.Body, max)
	fw := &forwardWriter{w: w}
	mux.ServeHTTP(fw, req)
	if fw.matched {
		return
	}
	// The mux answered itself (404, 405 or a path-cleaning redirect): say it in JSON.
	status := fw.code
	if status == 0 {
		status = http.StatusNotFound
	}
	for _, h := range []string{"Allow", "Location"} {
		if v := fw.header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	msg := http.StatusText(status)
	switch {
	case status == http.StatusNotFound:
		writeProblem(w, status, "no HTTP function at "+req.URL.Path)
	case status == http.StatusMethodNotAllowed:
		writeProblem(w, status, "method "+req.Method+" is not allowed on "+req.URL.Path)
	case status >= 400:
		writeProblem(w, status, msg)
	default: // a path-cleaning redirect: not an error
		writeError(w, status, msg)
	}
}

// forwardWriter is what the mux writes to: registered handlers switch it to pass-through
// (matched); anything the mux writes by itself is captured and rewritten as JSON.
type forwardWriter struct {
	head
	w       http.ResponseWriter
	matched bool
}

func (f *forwardWriter) Write(b []byte) (int, error) {
	f.WriteHeader(http.StatusOK)
	return len(b), nil
}

// forwarded wraps a registered HTTP handler.
type forwarded struct {
	h   http.Handler
	log *slog.Logger
}

func (f forwarded) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if fw, ok := w.(*forwardWriter); ok {
		fw.matched = true
		w = fw.w
	}
	jw := &jsonDefaultWriter{ResponseWriter: w}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			f.log.Error("funchost: HTTP handler panicked", "path", req.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if jw.wrote {
				panic(http.ErrAbortHandler)
			}
			writeProblem(w, http.StatusInternalServerError, "the request failed; it was logged")
		}
	}()
	f.h.ServeHTTP(jw, req)
}

// jsonDefaultWriter sets Content-Type application/json on replies that set none, so Go's
// content sniffing never labels JSON as text/plain.
type jsonDefaultWriter struct {
	http.ResponseWriter
	wrote bool
}

func (j *jsonDefaultWriter) WriteHeader(code int) {
	if !j.wrote && code >= 200 {
		j.wrote = true
		if j.Header().Get("Content-Type") == "" {
			j.Header().Set("Content-Type", "application/json")
		}
	}
	j.ResponseWriter.WriteHeader(code)
}

func (j *jsonDefaultWriter) Write(b []byte) (int, error) {
	if !j.wrote {
		j.WriteHeader(http.StatusOK)
	}
	return j.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (Flush, deadlines).
func (j *jsonDefaultWriter) Unwrap() http.ResponseWriter { return j.ResponseWriter }

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	writeJSON(w, status, body)
}

// Problem codes of the router's own answers on forwarded paths, the same strings as the
// HTTP APIs' codes (shared/httpapi) for the same statuses.
var problemCodes = map[int]string{
	http.StatusNotFound:              "NotFound",
	http.StatusMethodNotAllowed:      "MethodNotAllowed",
	http.StatusRequestEntityTooLarge: "ContentTooLarge",
	http.StatusInternalServerError:   "Internal",
}

// problemTitles spell the titles as the API's problems do (httpapi's table: "Not found",
// not net/http's "Not Found"); funchost sits below httpapi and cannot import it, so
// TestLocalEventsRoute (shared/app) checks the 404 of both.
var problemTitles = map[int]string{
	http.StatusNotFound:              "Not found",
	http.StatusRequestEntityTooLarge: "Content too large",
	http.StatusInternalServerError:   "Internal error",
}

func problemTitle(status int) string {
	if t := problemTitles[status]; t != "" {
		return t
	}
	return http.StatusText(status)
}

// writeProblem answers a forwarded HTTP request the router itself refuses as RFC 9457
// problem details (application/problem+json), the error shape of every HTTP API route.
func writeProblem(w http.ResponseWriter, status int, detail string) {
	code := problemCodes[status]
	if code == "" {
		code = strings.ReplaceAll(http.StatusText(status), " ", "")
	}
	body, _ := json.Marshal(struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
		Code   string `json:"code"`
	}{"about:blank", problemTitle(status), status, detail, code})
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func nonNilLogs(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
