package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Header names read by Caller.
const (
	// HeaderBusinessUnits narrows the business units a request may see: a comma-separated
	// list of ids, or "*". Set by the front door in Azure (strip it from client requests
	// there); a local caller may set it to look as a narrower tenant.
	HeaderBusinessUnits = "X-Automation-Business-Units"
	// HeaderOperator names the person acting, for audits, when App Service authentication
	// (X-MS-CLIENT-PRINCIPAL-NAME) is not in front.
	HeaderOperator      = "X-Automation-Operator"
	headerPrincipalName = "X-MS-CLIENT-PRINCIPAL-NAME"
)

// ScopeHeader reads X-Automation-Business-Units from h: the scope it asks for and whether it
// was sent. The header narrows a caller's scope, never widens it; it must be sent once (a
// proxy or client that adds a second one would otherwise have its values joined) and be
// either "*" alone or a comma-separated list of ids. Errors: CodeMalformed naming the header
// (400) for a repeated header and for "*" mixed with ids ("bu-b,*" once meant every unit).
// Source: issue 37, "repeated scope headers are joined, and * anywhere in the list means every unit".
func ScopeHeader(h http.Header) (automation.Scope, bool, error) {
	vals := h.Values(HeaderBusinessUnits)
	switch len(vals) {
	case 0:
		return automation.Scope{}, false, nil
	case 1:
	default:
		return automation.Scope{}, true, &automation.Error{Code: automation.CodeMalformed, Field: HeaderBusinessUnits,
			Message: "must be sent once (a comma-separated list of business-unit ids, or *)"}
	}
	ids := strings.Split(vals[0], ",")
	star := false
	for i, id := range ids {
		ids[i] = strings.TrimSpace(id)
		star = star || ids[i] == "*"
	}
	if star && len(ids) > 1 {
		return automation.Scope{}, true, &automation.Error{Code: automation.CodeMalformed, Field: HeaderBusinessUnits,
			Message: "mixes * with business-unit ids: send * alone, or the ids alone"}
	}
	return automation.BusinessUnits(ids...), true, nil
}

// Caller is who makes a request: the business units they may see and their name for audits.
type Caller struct {
	Scope    automation.Scope
	Operator string // "" when nobody named themselves
	// Principal is who the credential says the caller is (zero when the API takes no
	// credentials, and for API.Caller: the console's bootstrap-token sign-in).
	Principal Principal
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the Caller of a request handled through API.Handler. Without one the
// caller sees nothing (fail closed).
func CallerFrom(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// operatorName cleans a header value for audit records (automation.OperatorName: trimmed,
// control and bidirectional-text characters removed, at most automation.MaxOperatorBytes).
func operatorName(v string) string { return automation.OperatorName(v) }

// RequireOperator returns the operator a write is audited under: the principal of an API
// key or token that names one, followed by the X-Automation-Operator header's text as the
// reason ("key:pos / jane"); with the bootstrap token or no credential, the header (or the
// signed-in user) alone. Errors: CodeMalformed naming the header (400) when there is
// none; what names the audited action ("release", "change", …) in the message.
func RequireOperator(r *http.Request, what string) (string, error) {
	op := CallerFrom(r.Context()).Operator
	if op == "" {
		return "", &automation.Error{Code: automation.CodeMalformed, Field: HeaderOperator,
			Message: "is required: send X-Automation-Operator (or sign in) so the " + what + " is audited"}
	}
	return op, nil
}

// RequireUnit checks a business unit a request names against the caller's scope. Errors:
// automation.Invalid("businessUnitId") when it is missing or blank (422), NotFound when the
// caller may not see it (404: a unit outside the scope is answered as if it did not exist).
func RequireUnit(r *http.Request, bu string) error {
	if strings.TrimSpace(bu) == "" {
		return automation.Invalid("businessUnitId", "is required")
	}
	if !CallerFrom(r.Context()).Scope.Allows(bu) {
		return automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
	}
	return nil
}

// UnitReader is the store read of a business unit (businessunit.Reader's method, which
// this layer cannot import).
type UnitReader interface {
	// BusinessUnitGet returns store.ErrNotFound for an unknown id.
	BusinessUnitGet(ctx context.Context, id string) (store.BusinessUnit, error)
}

// UnitStored checks that business unit bu, already in the caller's scope, is stored in
// units: NotFound (404, "business unit %q not found", as for one outside the scope) when
// units answers store.ErrNotFound, its other errors as they are. A nil units checks nothing
// (an adapter whose Deps leave the lookup out). An Endpoint's UnitCheck calls it.
func UnitStored(ctx context.Context, units UnitReader, bu string) error {
	if units == nil {
		return nil
	}
	if _, err := units.BusinessUnitGet(ctx, bu); errors.Is(err, store.ErrNotFound) {
		return automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
	} else if err != nil {
		return err
	}
	return nil
}
