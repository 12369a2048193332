// A real OpenID provider for the tests (oidc-provider, pinned in package.json; a certified
// OpenID Connect implementation), on 127.0.0.1 only: discovery, a JWKS with a key made at
// start, and the client-credentials grant issuing RS256 JWT access tokens for one audience.
// Started by scripts/oidc.sh; docs/security.md#openid-connect.
//
// Clients (client_secret_basic): automation-admin / admin-secret → roles [Automation.Admin],
// units "*"; automation-reader / reader-secret → roles [read], units [bu-a].
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const port = Number(process.env.OIDC_PORT || 9090);
const issuer = `http://127.0.0.1:${port}`;
const audience = process.env.OIDC_AUDIENCE || 'api://automation';

const grants = {
  'automation-admin': { roles: ['Automation.Admin'], automation_units: '*' },
  'automation-reader': { roles: ['read'], automation_units: ['bu-a'] },
};

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-1', use: 'sig', alg: 'RS256' };

const client = (id, secret) => ({
  client_id: id, client_secret: secret, grant_types: ['client_credentials'],
  redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_basic', scope: 'api',
});

const provider = new Provider(issuer, {
  clients: [client('automation-admin', 'admin-secret'), client('automation-reader', 'reader-secret')],
  jwks: { keys: [jwk] },
  scopes: ['api'],
  features: {
    devInteractions: { enabled: false },
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
