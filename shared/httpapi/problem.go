package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// ProblemContentType is the media type of RFC 9457 problem details.
const ProblemContentType = "application/problem+json"

// ProblemTypeBase prefixes the type URI of every problem: ProblemTypeBase + code, e.g.
// "https://automation-platform.dev/problems/InvalidInput". The URI identifies the problem
// kind; it need not resolve.
const ProblemTypeBase = "https://automation-platform.dev/problems/"

// Problem is an RFC 9457 problem details object. Code (extension member) is the stable
// automation.ErrorCode; Errors (extension member) lists field errors of a validation problem.
type Problem struct {
	Type     string       `json:"type"`
	Title    string       `json:"title"`
	Status   int          `json:"status"`
	Detail   string       `json:"detail,omitempty"`
	Instance string       `json:"instance,omitempty"`
	Code     string       `json:"code"`
	Errors   []FieldError `json:"errors,omitempty"`
}

// FieldError is one invalid input field: Field is a JSON path ("offsetsDays[1]") or a
// query parameter name.
type FieldError struct {
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

var titles = map[automation.ErrorCode]string{
	automation.CodeMalformed:            "Malformed request",
	automation.CodeUnauthorized:         "Unauthorized",
	automation.CodeForbidden:            "Forbidden",
	automation.CodeTooManyRequests:      "Too many requests",
	automation.CodeNotFound:             "Not found",
	automation.CodeConflict:             "Conflict",
	automation.CodeInProgress:           "Request in progress",
	automation.CodePreconditionFailed:   "Precondition failed",
	automation.CodeInvalidInput:         "Invalid input",
	automation.CodeIdempotencyMismatch:  "Idempotency key reused",
	automation.CodePreconditionRequired: "Precondition required",
	automation.CodeInternal:             "Internal error",
	CodeContentTooLarge:                 "Content too large",
	automation.CodeUnsupportedMediaType: "Unsupported media type",
}

// ProblemTitle is the title of a problem with code and status: the one spelling every route
// uses for a code ("Not found", not net/http's "Not Found"), else http.StatusText(status).
// Routes that write their own problems (the local domain-events endpoint) take it from here.
func ProblemTitle(code automation.ErrorCode, status int) string {
	if t := titles[code]; t != "" {
		return t
	}
	return http.StatusText(status)
}

// StatusOf returns the HTTP status for err (the table in the package doc).
func StatusOf(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, store.ErrLeaseLost):
		return http.StatusPreconditionFailed
	case errors.Is(err, store.ErrConflict):
		return http.StatusConflict
	}
	switch automation.CodeOf(err) {
	case automation.CodeMalformed:
		return http.StatusBadRequest
	case automation.CodeUnauthorized:
		return http.StatusUnauthorized
	case automation.CodeForbidden:
		return http.StatusForbidden
	case automation.CodeTooManyRequests:
		return http.StatusTooManyRequests
	case automation.CodeNotFound:
		return http.StatusNotFound
	case automation.CodeConflict, automation.CodeInProgress:
		return http.StatusConflict
	case automation.CodePreconditionFailed:
		return http.StatusPreconditionFailed
	case automation.CodeInvalidInput, automation.CodeIdempotencyMismatch:
		return http.StatusUnprocessableEntity
	case automation.CodePreconditionRequired:
		return http.StatusPreconditionRequired
	case CodeContentTooLarge:
		return http.StatusRequestEntityTooLarge
	case automation.CodeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	}
	// No code: the intent decides (automation.Intent). Only "retry after" has an answer of
	// its own; give-up and outcome-unknown errors without a code are internal errors.
	if automation.IntentOf(err) == automation.IntentRetryAfter {
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// ProblemOf builds the problem details for err. A 500 carries no detail: internal errors
// may name tables, hosts or personal data. A 4xx carries the Field and Message of err's
// automation.Error, never the text of errors it wraps or that wrap it; a bare store error
// (ErrNotFound, ErrConflict, ErrLeaseLost) gets a fixed detail.
func ProblemOf(err error) Problem {
	status := StatusOf(err)
	code := automation.CodeOf(err)
	switch {
	case errors.Is(err, store.ErrNotFound):
		code = automation.CodeNotFound
	case errors.Is(err, store.ErrLeaseLost):
		code = automation.CodePreconditionFailed
	case errors.Is(err, store.ErrConflict) && code == automation.CodeInternal:
		code = automation.CodeConflict
	}
	p := Problem{Type: ProblemTypeBase + string(code), Title: titles[code], Status: status, Code: string(code)}
	if p.Title == "" {
		p.Title = http.StatusText(status)
	}
	if status == http.StatusInternalServerError {
		p.Detail = "the request failed; it was logged"
		return p
	}
	if status == http.StatusServiceUnavailable {
		// A "retry after" without a code of its own is Unavailable, not Internal: a client
		// that reads the code must not take it for a server fault.
		if code == automation.CodeInternal {
			code = automation.CodeUnavailable
			p.Type, p.Code = ProblemTypeBase+string(code), string(code)
		}
		p.Title, p.Detail = http.StatusText(status), "temporarily unavailable; retry later (Retry-After)"
		return p
	}
	// The detail is what an automation.Error says to the client (its Field and Message),
	// never the text of what it wraps or of what wraps it: below it are store errors naming
	// the dialect, statements, hosts and files.
	var e *automation.Error
	if !errors.As(err, &e) || error(e) == store.ErrNotFound || error(e) == store.ErrLeaseLost || error(e) == store.ErrConflict {
		switch {
		case errors.Is(err, store.ErrNotFound):
			p.Detail = "not found"
		case errors.Is(err, store.ErrLeaseLost):
			p.Detail = "the resource changed since it was read; read it again"
		default: // store.ErrConflict
			p.Detail = "the request conflicts with the current state of the resource; read it again"
		}
		return p
	}
	p.Detail = strings.TrimSpace(e.Message)
	if len(e.Fields) > 0 {
		for _, f := range e.Fields {
			p.Errors = append(p.Errors, FieldError{Field: f.Field, Message: f.Message})
		}
	} else if e.Field != "" {
		p.Errors = []FieldError{{Field: e.Field, Message: e.Message}}
		p.Detail = e.Field + ": " + p.Detail
	}
	return p
}

// WriteProblem writes p as application/problem+json with p.Status.
func WriteProblem(w http.ResponseWriter, p Problem) {
	body, err := json.Marshal(p)
	if err != nil { // cannot happen: Problem has only strings and ints
		body = []byte(`{"type":"about:blank","title":"Internal error","status":500}`)
		p.Status = http.StatusInternalServerError
	}
	h := w.Header()
	h.Set("Content-Type", ProblemContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("ETag")
	if p.Status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="automation"`)
	}
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(body, '\n'))
}

// WriteError answers err as problem details (StatusOf) and logs 5xx with the error's text
// (never sent to the caller). r may be nil.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	p := ProblemOf(err)
	if r != nil {
		p.Instance = r.URL.Path
	}
	_, retry := automation.RetryAfterOf(err)
	if p.Status >= 500 && log != nil && retry && p.Status == http.StatusServiceUnavailable {
		// A 503 with Retry-After is an answer the caller acts on (backpressure, a busy
		// resource), not a failure to investigate: at request rates an ERROR line each would
		// flood the logs (the refusing component counts them in its metrics).
		log.Debug("http request refused for now", "error", err.Error(), "status", p.Status)
	} else if p.Status >= 500 && log != nil {
		attrs := []any{"error", err.Error(), "status", p.Status}
		if r != nil {
			attrs = append(attrs, "method", r.Method, "path", r.URL.Path)
		}
		log.Error("http request failed", attrs...)
	}
	if d, ok := automation.RetryAfterOf(err); ok && (p.Status == http.StatusServiceUnavailable || p.Status == http.StatusTooManyRequests) {
		w.Header().Set("Retry-After", strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10))
	}
	WriteProblem(w, p)
}
