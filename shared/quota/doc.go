// Package quota holds the per-tenant quotas under the global caps (docs/security.md#quotas):
// live inbox streams per business unit and per recipient, and ingest events per second per
// tenant credential, an API key or an OIDC principal (a batch of 500 events counts 500: eventsapi charges it with ChargeIngest once
// decoded, before anything is written). A tenant over its quota gets 429 with Retry-After; the others are not
// affected. It plugs into httpapi.Options.Admit, so it runs after authentication and
// scope, for the routes it names by ServeMux pattern.
//
// Counts live in the instance's memory, like the global cap they sit under (the inbox
// broker's inbox.DefaultMaxSubscribers streams per instance): a scaled-out app allows
// each tenant its quota on every instance.
package quota
