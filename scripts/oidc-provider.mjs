// A real OpenID provider for the tests (oidc-provider, pinned in package.json; a certified
// OpenID Connect implementation), on 127.0.0.1 only: discovery, a JWKS with a key made at
// start, and the client-credentials grant issuing RS256 JWT access tokens for one audience.
// Started by scripts/oidc.sh; docs/security.md#openid-connect.
//
// Clients (client_secret_basic): automation-admin / admin-secret → roles [Automation.Admin],
// units "*"; automation-reader / reader-secret → roles [read], units [bu-a].
//
// The console's client (docs/console.md#sign-in): automation-console / console-secret, the
// authorization-code flow with PKCE, redirect URI http://127.0.0.1/api/console/oidc/callback
// on any port (a native client: loopback redirects match without the port, RFC 8252 section 7.3, so
// a test server's random port works). People sign in on the provider's own login form
// (devInteractions; any password): "operator" → roles [Automation.Operate], units [bu-a];
// "reader" → [read], [bu-a]; "grouped" → no role claim, groups [g-ops]; anyone else → no
// role. Their roles and units are in the ID
// token (conformIdTokenClaims off); consent is implied for this first-party client.
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const port = Number(process.env.OIDC_PORT || 9090);
const issuer = `http://127.0.0.1:${port}`;
const audience = process.env.OIDC_AUDIENCE || 'api://automation';

const grants = {
  'automation-admin': { roles: ['Automation.Admin'], automation_units: '*' },
  'automation-reader': { roles: ['read'], automation_units: ['bu-a'] },
};

const people = {
  operator: { roles: ['Automation.Operate'], automation_units: ['bu-a'] },
  reader: { roles: ['read'], automation_units: ['bu-a'] },
  // Roles through a group only (AUTOMATION_OIDC_GROUPS maps g-ops), as Entra ID's groups claim.
  grouped: { groups: ['g-ops'] },
};

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-1', use: 'sig', alg: 'RS256' };

const client = (id, secret) => ({
  client_id: id, client_secret: secret, grant_types: ['client_credentials'],
  redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_basic', scope: 'api',
});

const provider = new Provider(issuer, {
  clients: [client('automation-admin', 'admin-secret'), client('automation-reader', 'reader-secret'), {
    client_id: 'automation-console', client_secret: 'console-secret', application_type: 'native',
    grant_types: ['authorization_code'], response_types: ['code'],
    redirect_uris: ['http://127.0.0.1/api/console/oidc/callback'], token_endpoint_auth_method: 'client_secret_basic',
  }],
  jwks: { keys: [jwk] },
  scopes: ['openid', 'profile', 'api'],
  claims: { openid: ['sub'], profile: ['preferred_username', 'roles', 'automation_units', 'groups'] },
  conformIdTokenClaims: false,
  findAccount: (ctx, id) => ({
    accountId: id,
    claims: () => ({ sub: id, preferred_username: id, ...(people[id] || {}) }),
  }),
  // The console is first-party: its sign-in needs no consent screen.
  loadExistingGrant: async (ctx) => {
    const id = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (id) return ctx.oidc.provider.Grant.find(id);
    if (ctx.oidc.client.clientId !== 'automation-console') return undefined;
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid profile');
    grant.addOIDCClaims(['preferred_username', 'roles', 'automation_units', 'groups']);
    await grant.save();
    return grant;
  },
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => audience,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'api', audience, accessTokenTTL: 300, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  extraTokenClaims: (ctx, token) => grants[token.clientId] || {},
});

provider.listen(port, '127.0.0.1', () => {
  console.log(`oidc-provider listening on ${issuer}`);
});
