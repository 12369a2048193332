package session

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// MaxPrincipalBytes bounds a principal's name (the ConsoleSession.Principal column).
const MaxPrincipalBytes = 200

// Admin ends console sessions on an admin's word (the sessions API, `automation sessions`).
type Admin struct {
	Store store.SessionStore
	Clock automation.Clock
}

// EndResult is the answer of EndPrincipal.
type EndResult struct {
	Principal string `json:"principal"`
	Ended     int    `json:"ended"` // live sessions ended now; 0 when none was live
}

// EndPrincipal ends every live console session of principal at once (the row's EndReason
// is ReasonAdmin): "oidc:jane", "key:support-desk", "bootstrap". Their next request finds no
// session. Errors: automation.Invalid("principal") for an empty or over-long name.
func (a *Admin) EndPrincipal(ctx context.Context, principal string) (EndResult, error) {
	principal = strings.TrimSpace(principal)
	if principal == "" || len(principal) > MaxPrincipalBytes || !utf8.ValidString(principal) {
		return EndResult{}, automation.Invalid("principal", "is required: the session's principal as the console shows it (oidc:<name>, key:<name>, bootstrap), at most %d bytes", MaxPrincipalBytes)
	}
	n, err := a.Store.ConsoleSessionEndPrincipal(ctx, principal, a.Clock.Now().UTC(), ReasonAdmin)
	if err != nil {
		return EndResult{}, err
	}
	return EndResult{Principal: principal, Ended: n}, nil
}
