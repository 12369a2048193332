package app

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/handler"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/local"
	"github.com/automation-platform/automation/shared/publish"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// LocalEventsPath is the serve-only HTTP route that puts a domain event on the in-process
// domain-events topic, standing in for Service Bus (the `publish -local` command uses it).
const LocalEventsPath = "/api/local/domain-events"

// maxEventBytes bounds one event posted to LocalEventsPath.
const maxEventBytes = 1 << 20

// ListenerHandler is what a runtime serves on its HTTP listener. hostMode (the custom
// handler, FUNCTIONS_CUSTOMHANDLER_PORT set): the whole Functions router — the invocation
// paths POST /{FunctionName} and the forwarded /api routes — on 127.0.0.1 only
// (funchost.Addr), where the Functions host on the same instance is the only caller; the
// invocation protocol carries no token or scope, so the loopback bind is its guard. Local
// serve (hostMode false): the readiness probe and the /api routes only (each checks the
// bearer token and the business-unit scope); the invocation paths answer 404, because the
// local host invokes the router in process and nothing else may reach them.
//
// With telemetry on, each request gets a server span whose parent is its W3C traceparent
// header (telemetry.HTTPMiddleware); in host mode an invocation's span is the router's.
func (r *Runtime) ListenerHandler(hostMode bool) http.Handler {
	if hostMode {
		fwd := r.Telemetry.HTTPMiddleware(r.Functions)
		if fwd == http.Handler(r.Functions) {
			return r.Functions
		}
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if strings.HasPrefix(req.URL.Path, "/api/") { // a forwarded HTTP function request
				fwd.ServeHTTP(w, req)
				return
			}
			r.Functions.ServeHTTP(w, req)
		})
	}
	h := r.Telemetry.HTTPMiddleware(r.Functions.ForwardedOnly())
	metrics := r.metricsHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == MetricsPath {
			metrics.ServeHTTP(w, req)
			return
		}
		// The console lives below the Functions route prefix (/api/console/); the short
		// address a person types goes there in one redirect ("/console" straight to
		// "/api/console/", not via "/api/console"), keeping the query.
		if p := req.URL.Path; req.Method == http.MethodGet && (p == "/console" || strings.HasPrefix(p, "/console/")) {
			to := "/api" + p
			if p == "/console" {
				to += "/"
			}
			if req.URL.RawQuery != "" {
				to += "?" + req.URL.RawQuery
			}
			http.Redirect(w, req, to, http.StatusFound)
			return
		}
		h.ServeHTTP(w, req)
	})
}

// MetricsPath is the Prometheus scrape route of local serve (OTEL_METRICS_EXPORTER
// prometheus): the same OTel instruments the OTLP export carries, in the Prometheus text
// format.
const MetricsPath = "/metrics"

// MetricsPattern is MetricsPath's entry in the role table (shared/app/roles.go).
const MetricsPattern = "GET " + MetricsPath

// metricsHandler serves MetricsPath: GET only; 404 when the Prometheus exporter is off.
// Guard: with AUTOMATION_METRICS_TOKEN, exactly that bearer token (a scraper gets its own
// credential, not the API's); without it, the API's own guard (AUTOMATION_API_TOKEN, like
// every /api route), for a caller whose scope is every business unit (404 otherwise: the
// series name every unit). A refusal is a problem-details 401.
func (r *Runtime) metricsHandler() http.Handler {
	serve := func(w http.ResponseWriter, req *http.Request) {
		if r.Telemetry == nil || r.Telemetry.Prometheus == nil {
			http.NotFound(w, req)
			return
		}
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		r.Telemetry.Prometheus.ServeHTTP(w, req)
	}
	if r.metricsToken != "" {
		want := []byte("Bearer " + r.metricsToken)
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if subtle.ConstantTimeCompare([]byte(req.Header.Get("Authorization")), want) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"type":"about:blank","title":"Unauthorized","status":401,"detail":"GET /metrics needs the metrics bearer token"}`))
				return
			}
			serve(w, req)
		})
	}
	if r.API != nil {
		guarded := r.API.Handler(func(w http.ResponseWriter, req *http.Request) error {
			// The series are platform-wide (every unit's figures, labelled with the unit): only
			// a caller that sees every business unit the deployment serves reads them; another
			// gets 404, as if the route did not exist.
			if !seesAll(httpapi.CallerFrom(req.Context()).Scope, r.apiScope) {
				return automation.Errorf(automation.CodeNotFound, "GET /metrics is platform-wide: only a caller that sees every business unit reads it")
			}
			serve(w, req)
			return nil
		})
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			// Served beside the router, not by it: the role table finds the route by the
			// pattern a ServeMux would have set (MetricsPattern).
			req.Pattern = MetricsPattern
			guarded.ServeHTTP(w, req)
		})
	}
	return http.HandlerFunc(serve)
}

// seesAll reports whether a caller's scope holds every unit of the deployment's.
func seesAll(caller, deployment automation.Scope) bool {
	if caller.All() {
		return true
	}
	if deployment.All() {
		return false
	}
	for _, u := range deployment.Units() {
		if !caller.Allows(u) {
			return false
		}
	}
	return true
}

// FunctionsDir finds the function folders: explicit when given; else ./functions when it
// holds function folders (the repository); else the current folder (a deployed app root,
// where the folders sit beside host.json).
func FunctionsDir(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if m, _ := filepath.Glob(filepath.Join("functions", "*", "function.json")); len(m) > 0 {
		return "functions"
	}
	return "."
}

// LocalHost wires the function folders in dir to this runtime's Functions router on the
// in-process bus: Service Bus functions receive bus messages; timer functions fire on their
// schedules when timers is true (serve), and are left to the Functions host otherwise.
// It also registers LocalEventsPath. Errors when the runtime uses Service Bus.
func (r *Runtime) LocalHost(dir string, cfg config.Config, timers bool, log *slog.Logger) (*local.Host, error) {
	if r.Memory == nil {
		return nil, errors.New("app: the local host needs the in-process bus (Service Bus is configured)")
	}
	defs, err := funchost.LoadFunctionFolders(dir)
	if err != nil {
		return nil, err
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("app: no function folders (*/function.json) in %s", dir)
	}
	if !timers {
		kept := defs[:0]
		for _, d := range defs {
			if d.Trigger.Type != funchost.TriggerTimer {
				kept = append(kept, d)
			}
		}
		defs = kept
	}
	h, err := local.NewHost(r.Functions, r.Memory, defs, cfg.Lookup, r.Clock, log)
	if err != nil {
		return nil, err
	}
	h.SetConcurrency(cfg.ConsumerConcurrency)
	h.SetBatchSize(cfg.ConsumerBatch)
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	post := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.postLocalEvent(w, req, h, log) })
	if r.API != nil { // the bearer token of every /api route (serve -token) guards this one too
		r.Functions.RegisterHTTP(LocalEventsPath, r.API.Handler(func(w http.ResponseWriter, req *http.Request) error {
			post.ServeHTTP(w, req)
			return nil
		}))
		return h, nil
	}
	r.Functions.RegisterHTTP(LocalEventsPath, post)
	return h, nil
}

// postLocalEvent validates one CloudEvent and hands it to DomainEventHandler at once,
// exactly as the host would deliver it from the topic, answering only when it was
// processed: 200 with status "processed", or "duplicate" when the same source and id were
// processed before (nothing done: a re-sent id never changes anything), 400 not a valid CloudEvent, 404 its businessunitid is outside
// the caller's scope (nothing processed or stored), 422 rejected by the handler (recorded
// as a dead letter), 503 a retryable failure (send it again; the cause is logged, never
// answered). Errors are RFC 9457 problem details like every /api route. Nothing waits in
// memory.
func (r *Runtime) postLocalEvent(w http.ResponseWriter, req *http.Request, h *local.Host, log *slog.Logger) {
	problem := func(status int, code, detail string) {
		httpapi.WriteProblem(w, httpapi.Problem{Type: httpapi.ProblemTypeBase + code, Title: httpapi.ProblemTitle(automation.ErrorCode(code), status),
			Status: status, Detail: detail, Instance: req.URL.Path, Code: code})
	}
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		problem(http.StatusMethodNotAllowed, "MethodNotAllowed", "use POST")
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxEventBytes+1))
	if err != nil || len(body) > maxEventBytes {
		problem(http.StatusRequestEntityTooLarge, string(httpapi.CodeContentTooLarge), fmt.Sprintf("a request is at most %d bytes", maxEventBytes))
		return
	}
	// Every content mode of the CloudEvents HTTP binding (binary, structured, batched).
	mode, raws, err := events.DecodeHTTP(req.Context(), req.Header, body)
	if err != nil {
		p := httpapi.ProblemOf(err)
		p.Instance = req.URL.Path
		httpapi.WriteProblem(w, p)
		return
	}
	if mode == events.ModeBatch {
		results := make([]localResult, len(raws))
		for i, raw := range raws {
			results[i] = r.processLocalEvent(req, h, log, raw)
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"results": results})
		return
	}
	res := r.processLocalEvent(req, h, log, raws[0])
	if res.Status != "rejected" {
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"eventId": res.EventID, "status": res.Status})
		return
	}
	problem(res.httpStatus, res.code, res.Reason)
}

// localResult is what became of one event posted to LocalEventsPath.
type localResult struct {
	EventID    string `json:"eventId,omitempty"`
	Status     string `json:"status"` // processed, duplicate or rejected
	Reason     string `json:"reason,omitempty"`
	httpStatus int
	code       string
}

// processLocalEvent validates one event and hands it to DomainEventHandler (see postLocalEvent).
func (r *Runtime) processLocalEvent(req *http.Request, h *local.Host, log *slog.Logger, in events.Raw) localResult {
	rejected := func(id string, status int, code, reason string) localResult {
		return localResult{EventID: id, Status: "rejected", Reason: reason, httpStatus: status, code: code}
	}
	if in.Err != nil {
		return rejected("", http.StatusBadRequest, string(automation.CodeMalformed), in.Err.Error())
	}
	raw := in.JSON
	ev, err := events.Parse(raw)
	if err != nil {
		return rejected("", http.StatusBadRequest, string(automation.CodeMalformed), err.Error())
	}
	// Writes are scoped like reads: an event for a business unit outside the caller's scope
	// answers 404 exactly like an unknown unit (httpapi's rule) and is not processed.
	// Without an API wrapper there is no caller, and the empty scope refuses every event.
	// A unit that does not exist is refused here too, before anything is stored, as
	// POST /api/events refuses it (issue 33, item 1): never accepted and then dead-lettered.
	if !httpapi.CallerFrom(req.Context()).Scope.Allows(ev.BusinessUnitID) {
		return rejected(ev.ID, http.StatusNotFound, string(automation.CodeNotFound), fmt.Sprintf("business unit %q not found", ev.BusinessUnitID))
	}
	if _, err := r.Store.BusinessUnitGet(req.Context(), ev.BusinessUnitID); errors.Is(err, store.ErrNotFound) {
		return rejected(ev.ID, http.StatusNotFound, string(automation.CodeNotFound), fmt.Sprintf("business unit %q not found", ev.BusinessUnitID))
	} else if err != nil {
		log.Error("local event not processed", "sourceEventId", ev.ID, "error", err.Error())
		return rejected(ev.ID, http.StatusServiceUnavailable, "NotProcessed", "event "+ev.ID+" was not processed; send it again")
	}
	code, body, err := h.Deliver(req.Context(), topology.DomainEventsTopic, publish.Message(ev, raw))
	if err != nil || code/100 != 2 {
		// The cause (a store error, a handler's text) stays in the log, never in the answer.
		log.Error("local event not processed", "sourceEventId", ev.ID, "status", code, "error", fmt.Sprint(err),
			"detail", strings.TrimSpace(string(body)))
		return rejected(ev.ID, http.StatusServiceUnavailable, "NotProcessed", "event "+ev.ID+" was not processed; send it again")
	}
	var res struct {
		Logs        []string
		ReturnValue struct {
			Outcome string `json:"outcome"`
		}
	}
	_ = json.Unmarshal(body, &res)
	for _, l := range res.Logs {
		if strings.Contains(l, "dead-lettered") {
			return rejected(ev.ID, http.StatusUnprocessableEntity, string(automation.CodeInvalidInput), "event "+ev.ID+": "+l)
		}
	}
	if res.ReturnValue.Outcome == handler.EventDuplicate {
		return localResult{EventID: ev.ID, Status: handler.EventDuplicate}
	}
	return localResult{EventID: ev.ID, Status: handler.EventProcessed}
}
