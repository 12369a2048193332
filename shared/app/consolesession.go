package app

import (
	"context"
	"errors"

	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/oidcauth"
	"github.com/automation-platform/automation/shared/session"
	"github.com/automation-platform/automation/shared/store"
)

// consoleSessionResolver re-checks a live console session on every request
// (session.Guard.Resolve; docs/security.md#sessions), from what it signed in with:
//
//   - an API key (KeyPrefix): the key as it stands now (keys.Current). A revoked key, or
//     one past its rotation's overlap, ends the session (session.ReasonRevoked); a key whose
//     roles no longer include read ends it too (session.ReasonRoles). Its roles and units
//     today are the session's.
//   - a person's claims (Claims): mapped again with today's mapping. Claims that map to no
//     role end the session (session.ReasonRoles), and so does every person's session when the
//     console's OIDC sign-in is no longer configured (people): the deployment turned it off;
//     otherwise the roles and units they map to now are the session's, so a narrowed mapping
//     refuses the next request above them.
//   - neither (the bootstrap token; sessions older than migration 0057): nothing to re-check.
func consoleSessionResolver(keys *apikey.Service, mapping oidcauth.Mapping, people bool) func(context.Context, store.ConsoleSession) (*httpapi.Principal, error) {
	return func(ctx context.Context, s store.ConsoleSession) (*httpapi.Principal, error) {
		switch {
		case s.KeyPrefix != "":
			p, err := keys.Current(ctx, s.KeyPrefix)
			switch {
			case errors.Is(err, httpapi.ErrUnknownCredential):
				return nil, &session.Ended{Reason: session.ReasonRevoked}
			case err != nil:
				return nil, err
			case !p.Has(httpapi.RoleRead):
				return nil, &session.Ended{Reason: session.ReasonRoles}
			}
			return &p, nil
		case s.Claims != "":
			if !people {
				return nil, &session.Ended{Reason: session.ReasonRoles}
			}
			p, err := mapping.Remap(s.Principal, s.Claims)
			if err != nil || len(p.Roles) == 0 {
				return nil, &session.Ended{Reason: session.ReasonRoles}
			}
			return &p, nil
		}
		return nil, nil
	}
}
