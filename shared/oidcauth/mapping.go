package oidcauth

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
)

// DefaultGroupsClaim is the claim Entra ID puts security-group object ids in.
const DefaultGroupsClaim = "groups"

// MaxGroups bounds the groups a Mapping names (AUTOMATION_OIDC_GROUPS).
const MaxGroups = 500

// GroupGrant is what membership of one identity-provider group grants: roles and business
// units ("*" or comma-separated ids), added to what the role and units claims grant.
type GroupGrant struct {
	Roles []httpapi.Role `json:"roles"`
	Units string         `json:"units"`
}

// ParseGroups reads AUTOMATION_OIDC_GROUPS: a JSON object from group id (Entra ID: the
// group's object id) to its grant, e.g.
//
//	{"2f4c…-…": {"roles": ["operate"], "units": "bu-syd,bu-hcm"}, "9a1e…": {"roles": ["admin"], "units": "*"}}
//
// "" is no groups. Errors name the setting and the group: not an object, an unknown role, no
// role, "*" mixed with ids, more than MaxGroups groups.
func ParseGroups(s string) (map[string]GroupGrant, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var raw map[string]struct {
		Roles []string `json:"roles"`
		Units string   `json:"units"`
	}
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, fmt.Errorf("AUTOMATION_OIDC_GROUPS: a JSON object from group id to {\"roles\": [...], \"units\": \"a,b\"} is expected: %w", err)
	}
	if len(raw) > MaxGroups {
		return nil, fmt.Errorf("AUTOMATION_OIDC_GROUPS: at most %d groups, got %d", MaxGroups, len(raw))
	}
	out := make(map[string]GroupGrant, len(raw))
	for id, g := range raw {
		if strings.TrimSpace(id) == "" {
			return nil, fmt.Errorf("AUTOMATION_OIDC_GROUPS: a group id is empty")
		}
		if len(g.Roles) == 0 {
			return nil, fmt.Errorf("AUTOMATION_OIDC_GROUPS: group %q grants no role", id)
		}
		var gg GroupGrant
		for _, r := range g.Roles {
			role, err := httpapi.ParseRole("roles", strings.TrimPrefix(strings.ToLower(strings.TrimSpace(r)), "automation."))
			if err != nil {
				return nil, fmt.Errorf("AUTOMATION_OIDC_GROUPS: group %q: %w", id, err)
			}
			gg.Roles = append(gg.Roles, role)
		}
		units := strings.Split(g.Units, ",")
		for i := range units {
			units[i] = strings.TrimSpace(units[i])
		}
		if slices.Contains(units, "*") && len(units) > 1 {
			return nil, fmt.Errorf("AUTOMATION_OIDC_GROUPS: group %q: units are \"*\" alone or ids, not both", id)
		}
		gg.Units = strings.Join(units, ",")
		out[id] = gg
	}
	return out, nil
}

// Mapping turns an identity provider's claims into a principal's roles and units
// (docs/security.md#openid-connect): the role claim's names, the units claim's ids, and the
// grants of the groups the groups claim lists. The console keeps a person's claims in their
// session and maps them again on every request, so a changed mapping applies at once.
type Mapping struct {
	RoleClaim   string // DefaultRoleClaim when ""
	UnitsClaim  string // DefaultUnitsClaim when ""
	GroupsClaim string // DefaultGroupsClaim when ""
	// Groups grants roles and units per group id (ParseGroups); nil: groups grant nothing.
	Groups map[string]GroupGrant
}

func (m Mapping) roleClaim() string   { return cmp(m.RoleClaim, DefaultRoleClaim) }
func (m Mapping) unitsClaim() string  { return cmp(m.UnitsClaim, DefaultUnitsClaim) }
func (m Mapping) groupsClaim() string { return cmp(m.GroupsClaim, DefaultGroupsClaim) }

func cmp(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// Principal maps claims to a principal named name: the union of the roles and of the units
// the claims and the groups grant. A "*" mixed with ids in the units claim grants no unit
// from that claim.
func (m Mapping) Principal(name string, claims map[string]json.RawMessage) httpapi.Principal {
	rs := roles(claims[m.roleClaim()])
	scope := units(claims[m.unitsClaim()])
	all, ids := scope.All(), scope.Units()
	if len(m.Groups) > 0 {
		for _, g := range stringsOf(claims[m.groupsClaim()]) {
			grant, ok := m.Groups[g]
			if !ok {
				continue
			}
			rs = append(rs, grant.Roles...)
			if grant.Units == "*" {
				all = true
			} else if grant.Units != "" {
				ids = append(ids, strings.Split(grant.Units, ",")...)
			}
		}
	}
	slices.Sort(rs)
	rs = slices.Compact(rs)
	if all {
		scope = automation.AllBusinessUnits()
	} else {
		scope = automation.BusinessUnits(ids...)
	}
	return httpapi.Principal{Name: name, Roles: rs, Scope: scope}
}

// Kept is the part of claims a session keeps to map again (Principal): the role, units and
// groups claims, as JSON. Other claims (and the token itself) are not kept.
func (m Mapping) Kept(claims map[string]json.RawMessage) string {
	kept := map[string]json.RawMessage{}
	for _, c := range []string{m.roleClaim(), m.unitsClaim(), m.groupsClaim()} {
		if v, ok := claims[c]; ok {
			kept[c] = v
		}
	}
	b, _ := json.Marshal(kept)
	return string(b)
}

// Remap is Principal over claims as Kept stored them. Errors: claims that are not a JSON
// object.
func (m Mapping) Remap(name, kept string) (httpapi.Principal, error) {
	var claims map[string]json.RawMessage
	if err := json.Unmarshal([]byte(kept), &claims); err != nil {
		return httpapi.Principal{}, fmt.Errorf("oidcauth: unreadable kept claims: %w", err)
	}
	return m.Principal(name, claims), nil
}
