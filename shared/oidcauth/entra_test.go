package oidcauth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/oidcauth"
	"github.com/automation-platform/automation/shared/oidcauth/oidctest"
)

// Entra ID cannot be reached from the tests. entraIssuer is a host-shaped fixture of it on
// 127.0.0.1: the v2.0 issuer is <host>/<tenant id>/v2.0, its discovery document and JWKS
// are where Entra ID puts them (…/v2.0/.well-known/openid-configuration,
// …/discovery/v2.0/keys), and its tokens carry Entra's v2 access-token claims (ver 2.0, tid,
// oid, the client id as aud, app roles in roles, security-group object ids in groups).
type entraIssuer struct {
	srv    *httptest.Server
	key    *rsa.PrivateKey
	tenant string
}

const (
	entraTenant   = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	entraClientID = "6e2f5c4a-8d7b-4b1e-9c3a-0f1d2e3c4b5a" // the API's app registration
	opsGroup      = "0b5a9f3e-1c2d-4e5f-8a9b-c0d1e2f3a4b5" // a security group mapped to operate on bu-syd
)

func newEntraIssuer(t *testing.T) *entraIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	e := &entraIssuer{key: key, tenant: entraTenant}
	mux := http.NewServeMux()
	mux.HandleFunc("/"+entraTenant+"/v2.0/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		base := e.srv.URL + "/" + entraTenant
		json.NewEncoder(w).Encode(map[string]any{"issuer": e.issuer(), "jwks_uri": base + "/discovery/v2.0/keys",
			"authorization_endpoint": base + "/oauth2/v2.0/authorize", "token_endpoint": base + "/oauth2/v2.0/token",
			"id_token_signing_alg_values_supported": []string{"RS256"}, "tenant_region_scope": "OC"})
	})
	mux.HandleFunc("/"+entraTenant+"/discovery/v2.0/keys", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "nOo3ZDrODXEK1jKWhXslHR_KXEg", Use: "sig"}}})
	})
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	return e
}

func (e *entraIssuer) issuer() string { return e.srv.URL + "/" + entraTenant + "/v2.0" }

// token signs claims as Entra ID does: RS256, typ JWT, the key's kid.
func (e *entraIssuer) token(t *testing.T, claims map[string]any) string {
	t.Helper()
	return oidctest.Sign(t, jose.RS256, e.key, "nOo3ZDrODXEK1jKWhXslHR_KXEg", "JWT", claims)
}

// person is a v2 access token of a signed-in person (delegated: scp, name, preferred_username).
func (e *entraIssuer) person(over map[string]any) map[string]any {
	c := map[string]any{"aud": entraClientID, "iss": e.issuer(), "iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(),
		"exp": now.Add(time.Hour).Unix(), "aio": "AVQAq/8TAAAA", "azp": "0f2a8c1e-3b4d-4e5f-a6b7-c8d9e0f1a2b3", "azpacr": "0",
		"name": "Jane Nguyen", "oid": "1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "preferred_username": "jane@contoso.com",
		"rh": "0.AAAA", "roles": []string{"Automation.Read"}, "groups": []string{"9f8e7d6c-0000-4000-8000-000000000001", opsGroup},
		"scp": "access_as_user", "sub": "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ", "tid": entraTenant, "uti": "fqiBqXLPj0eQa82S-IYFAA", "ver": "2.0"}
	for k, v := range over {
		c[k] = v
	}
	return c
}

// Entra ID-shaped tokens through the same validation and mapping as any issuer's, with the
// settings docs/security.md gives for Entra ID (issuer …/<tenant>/v2.0, audience the client
// id, app roles in roles, groups mapped by AUTOMATION_OIDC_GROUPS, no automation_units claim):
//
//   - a person with the app role Automation.Read and the mapped group: read and operate, on
//     the group's unit only, named by preferred_username;
//   - an application with the client-credentials grant (idtyp app, roles only, no
//     preferred_username): named by azp, its app role's role, no unit;
//   - another tenant's issuer, the v1.0 issuer (sts.windows.net) of the same tenant, a v1
//     token's api:// audience when the client id is expected, and an expired token: 401.
func TestEntraShapedTokens(t *testing.T) {
	e := newEntraIssuer(t)
	groups, err := oidcauth.ParseGroups(`{"` + opsGroup + `": {"roles": ["Automation.Operate"], "units": "bu-syd"}}`)
	if err != nil {
		t.Fatal(err)
	}
	v, err := oidcauth.New(context.Background(), oidcauth.Config{Issuer: e.issuer(), Audience: entraClientID,
		Groups: groups, Clock: automation.NewManualClock(now)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Authenticate(context.Background(), e.token(t, e.person(nil)))
	if err != nil || p.Name != "oidc:jane@contoso.com" || !slices.Equal(p.Roles, []httpapi.Role{httpapi.RoleOperate, httpapi.RoleRead}) || p.Scope.String() != "bu-syd" {
		t.Fatalf("a person's token: %+v %v", p, err)
	}
	app := e.person(map[string]any{"idtyp": "app", "roles": []string{"Automation.Ingest"}, "azp": "4a3b2c1d-0e9f-4a8b-b7c6-d5e4f3a2b1c0"})
	for _, k := range []string{"preferred_username", "name", "scp", "groups"} {
		delete(app, k)
	}
	p, err = v.Authenticate(context.Background(), e.token(t, app))
	if err != nil || p.Name != "oidc:4a3b2c1d-0e9f-4a8b-b7c6-d5e4f3a2b1c0" || !slices.Equal(p.Roles, []httpapi.Role{httpapi.RoleIngest}) || p.Scope.String() != "" {
		t.Fatalf("an application's token: %+v %v", p, err)
	}
	for name, claims := range map[string]map[string]any{
		"another tenant":  e.person(map[string]any{"iss": e.srv.URL + "/00000000-0000-0000-0000-000000000000/v2.0", "tid": "00000000-0000-0000-0000-000000000000"}),
		"the v1.0 issuer": e.person(map[string]any{"iss": "https://sts.windows.net/" + entraTenant + "/", "ver": "1.0"}),
		"api:// audience": e.person(map[string]any{"aud": "api://" + entraClientID}),
		"expired":         e.person(map[string]any{"exp": now.Add(-time.Second).Unix()}),
	} {
		if _, err := v.Authenticate(context.Background(), e.token(t, claims)); !errors.Is(err, httpapi.ErrUnknownCredential) {
			t.Errorf("%s: %v, want ErrUnknownCredential (401)", name, err)
		}
	}
}

// The mapping a console session is re-evaluated with (Mapping.Kept, Mapping.Remap): only the
// role, units and groups claims are kept, and a changed grant applies when they are mapped
// again. ParseGroups refuses what it cannot honour, naming the setting and the group.
func TestMappingKeepsTheClaimsAndMapsThemAgain(t *testing.T) {
	claims := map[string]json.RawMessage{"roles": json.RawMessage(`["read"]`), "groups": json.RawMessage(`["g-1"]`),
		"preferred_username": json.RawMessage(`"jane"`), "email": json.RawMessage(`"jane@contoso.com"`)}
	m := oidcauth.Mapping{Groups: map[string]oidcauth.GroupGrant{"g-1": {Roles: []httpapi.Role{httpapi.RoleAdmin}, Units: "*"}}}
	kept := m.Kept(claims)
	if kept != `{"groups":["g-1"],"roles":["read"]}` {
		t.Fatalf("kept: %s", kept)
	}
	if p, err := m.Remap("oidc:jane", kept); err != nil || !p.Has(httpapi.RoleAdmin) || !p.Scope.All() {
		t.Fatalf("with the admin grant: %+v %v", p, err)
	}
	m.Groups = nil
	if p, err := m.Remap("oidc:jane", kept); err != nil || p.Has(httpapi.RoleOperate) || !p.Has(httpapi.RoleRead) || p.Scope.String() != "" {
		t.Fatalf("without it: %+v %v", p, err)
	}
	for _, bad := range []string{`[]`, `{"g":{"roles":[]}}`, `{"g":{"roles":["root"]}}`, `{"g":{"roles":["read"],"units":"bu-a,*"}}`, `{"":{"roles":["read"]}}`} {
		if _, err := oidcauth.ParseGroups(bad); err == nil {
			t.Errorf("ParseGroups(%s) accepted", bad)
		}
	}
}
