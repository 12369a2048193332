package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Where says in which deployment descriptions a setting must appear.
type Where int

// Declaration places.
const (
	Local Where = 1 << iota // local.settings.sample.json
	Azure                   // infra/*.bicep app settings
	Host                    // set by the Functions host itself; declared nowhere
)

// Setting describes one environment variable.
type Setting struct {
	Name    string
	Where   Where
	Default string
	Doc     string
}

// Settings is every environment variable the code reads (README lists them).
var Settings = []Setting{
	{"FUNCTIONS_CUSTOMHANDLER_PORT", Host, "", "Port the Functions host expects the custom handler on; set by the host. When set and no subcommand is given, the binary serves the custom-handler protocol."},
	{"AUTOMATION_SQLSERVER_DSN", Local | Azure, "", "go-mssqldb DSN. Empty: the embedded SQLite store. In Azure: sqlserver://<server>.database.windows.net?database=<db>&fedauth=ActiveDirectoryManagedIdentity&user+id=<client id>."},
	{"AUTOMATION_DATA_DIR", Local, ".data", "Embedded runtime: folder for the SQLite database (automation.db) and local trace (trace/)."},
	{"AUTOMATION_SERVICEBUS_CONNECTION", Local, "", "Service Bus connection string (development). Empty and no namespace: the in-process bus."},
	{"AUTOMATION_SERVICEBUS_NAMESPACE", Local | Azure, "", "Service Bus fully qualified namespace (<name>.servicebus.windows.net), used with managed identity."},
	{"AUTOMATION_STORAGE_CONNECTION", Local, "", "Storage connection string for trace rows and blobs (development, Azurite: the explicit devstoreaccount1 string). Empty and no URLs: local trace."},
	{"AUTOMATION_STORAGE_TABLE_URL", Local | Azure, "", "Table service URL (https://<account>.table.core.windows.net), used with managed identity."},
	{"AUTOMATION_STORAGE_BLOB_URL", Local | Azure, "", "Blob service URL (https://<account>.blob.core.windows.net), used with managed identity."},
	{"AZURE_CLIENT_ID", Local | Azure, "", "Client id of the user-assigned managed identity (azidentity reads it)."},
	{"DueWorkSchedule", Local | Azure, "*/30 * * * * *", "NCRONTAB (6 fields, UTC) of the DueWorkPoller timer."},
	{"OutboxRelaySchedule", Local | Azure, "*/10 * * * * *", "NCRONTAB of the OutboxRelay timer."},
	{"AUTOMATION_RELAY_AFTER_POLL", Local | Azure, "false", "true: an inline DueWorkPoller run relays the outbox messages it committed at once (the OutboxRelay timer stays as the safety net); the low traffic profile sets it with longer timer intervals."},
	{"AUTOMATION_EAGER_PUBLISH", Local | Azure, "true", "true: each process publishes the outbox rows it commits right after the commit (the eager publisher, docs/performance.md#publish-on-the-commit-path), under the relay's leases; the OutboxRelay timer stays as the safety net. false: only the timers publish."},
	{"AUTOMATION_RELAY_BUDGET_MS", Local | Azure, "5000", "Time budget of one relay drain, milliseconds (100..240000): an OutboxRelay invocation, a relay after a poll, or one eager-publisher wake drains the outbox until it is empty or this is spent."},
	{"AUTOMATION_INGEST_MAX_BACKLOG", Local | Azure, "50000", "Backpressure: when this many outbox rows wait unpublished (or, embedded, this many messages wait in the in-process bus), POST /api/events answers 503 with Retry-After instead of accepting (0..10000000; 0 turns it off). docs/gateway.md#backpressure."},
	{"AUTOMATION_SQLITE_GROUP_COMMIT", Local, "32", "Embedded SQLite: the most write transactions that queue for the one writer connection and commit together, each in its own savepoint (1..1000; 1: each commits alone). docs/performance.md#group-commit-on-the-writer."},
	{"AUTOMATION_CONSUMER_CONCURRENCY", Local, "tracking=2,events=2,campaign-commands=6", "Embedded runtime: consumers per in-process destination, as destination=count pairs separated by commas (count 1..16; a destination not named has one). A session's (customer's, entity's) messages are still handled one at a time and in order (docs/performance.md#consumers). In Azure the host.json Service Bus settings decide."},
	{"AUTOMATION_CONSUMER_BATCH", Local, "", "Embedded runtime: the most messages one invocation of a batch function (cardinality many: TrackingProcessor, NotificationDispatch, DeliveryFactProjection, CampaignFactProjection, CampaignResults) takes from its in-process destination, as destination=count pairs separated by commas (count 1..1000); a destination not named takes 100, host.json's maxMessageBatchSize, which Azure applies to every batch function. A destination of a one-message function is ignored. Sessions keep their order whatever the size (docs/performance.md#consumers)."},
	{"AUTOMATION_DUEWORK_MODE", Local | Azure, "inline", "DueWorkPoller: inline (execute claimed rows in the poller) or fanout (one due-work message per claimed row)."},
	{"AUTOMATION_DUEWORK_BATCH_SIZE", Local | Azure, "100", "Rows claimed per poll (1..1000)."},
	{"AUTOMATION_DUEWORK_CONCURRENCY", Local | Azure, "4", "Rows executed at once by an inline poll (1..64)."},
	{"AUTOMATION_DUEWORK_DRAIN_BATCHES", Local | Azure, "1000", "Batches one inline DueWorkPoller run claims at most (1..1000): above 1 it drains, claiming and executing each next batch while the last one's outcomes are written, and stops early when nothing is due; 1 runs one batch per timer tick."},
	{"AUTOMATION_BATCH_DEADLINE_SECONDS", Local | Azure, "150", "Batch Service Bus functions (NotificationDispatch, DeliveryFactProjection, CampaignFactProjection, CampaignResults, CampaignWorker): seconds after which an invocation starts no further chunk of its batch and fails, so the host abandons the batch while its locks hold (the host renews no lock of a batch); the rest comes again. 1..299, well under the entities' lockDuration (PT5M; default half of it)."},
	{"AUTOMATION_LEASE_SECONDS", Local | Azure, "300", "Processing lease of a claimed row, seconds (>= 30)."},
	{"AUTOMATION_LOG_LEVEL", Local | Azure, "info", "debug, info, warn or error."},
	{"AUTOMATION_MEMORY_LIMIT_MIB", Local | Azure, "64", "serve and the custom handler: the Go runtime's soft memory limit in MiB (runtime/debug.SetMemoryLimit; 0 = none), so the garbage collector works harder before the heap grows past it; the GOMEMLIMIT variable, when set, wins. SQLite's memory and the mapped binary are outside it (with 64, W6's five minutes peaked at 144–154 MiB of RSS: docs/performance.md#what-holds-w6s-memory)."},
	{"AUTOMATION_API_TOKEN", Local | Azure, "", "HTTP APIs: the bootstrap admin credential; when set, every /api request must send Authorization: Bearer <this token, an API key or an OIDC token> (docs/security.md#credentials), and the console signs in with it. In Azure a Key Vault reference; empty there leaves the routes to function keys alone and the console off."},
	{"AUTOMATION_WEBHOOK_SECRET", Local | Azure, "", "Webhook channel: HMAC-SHA256 signing key (at least 16 bytes). Empty: no webhook channel. In Azure a Key Vault reference."},
	{"AUTOMATION_WEBHOOK_PREVIOUS_SECRET", Local | Azure, "", "Webhook channel: a signing key being rotated out (at least 16 bytes): webhook-signature (Standard Webhooks) carries a signature with it beside the current one until receivers have the new secret. Empty: none. In Azure a Key Vault reference."},
	{"AUTOMATION_WEBHOOK_IDEMPOTENT", Local | Azure, "false", "Webhook channel: true when every receiver deduplicates by Idempotency-Key, so an UNKNOWN outcome is resent with the same key; false sends it to manual resolution."},
	{"AUTOMATION_WEBHOOK_ALLOW_PRIVATE_NETWORKS", Local | Azure, "false", "Webhook channel: true lets webhooks reach private, loopback and link-local addresses (receivers inside the VNet); false refuses URLs that resolve to them (SSRF guard; local serve always allows them)."},
	{"AUTOMATION_WEBHOOK_TIMEOUT_SECONDS", Local | Azure, "10", "Webhook channel: request timeout, seconds (1..300)."},
	{"AUTOMATION_NOTIFICATION_CATEGORIES", Local | Azure, "", "Recipient preferences: the notification categories as JSON ({\"categories\":[{\"name\",\"transactional\",\"templates\"}],\"default\"}, docs/channels.md#categories). Empty: marketing, loyalty, service and security, default marketing."},
	{"AUTOMATION_UNSUBSCRIBE_URL", Local | Azure, "", "One-click unsubscribe (RFC 8058): the public https address of the unsubscribe route (https://<host>/api/unsubscribe); with AUTOMATION_UNSUBSCRIBE_SECRET a marketing e-mail carries List-Unsubscribe. Empty: no link."},
	{"AUTOMATION_UNSUBSCRIBE_SECRET", Local | Azure, "", "One-click unsubscribe: the key that signs the links' tokens (at least 32 bytes). Empty: no link, and the route answers 404. In Azure a Key Vault reference."},
	{"AUTOMATION_SMTP_HOST", Local | Azure, "", "Email channel: SMTP server host. Empty: no email channel."},
	{"AUTOMATION_SMTP_PORT", Local | Azure, "0", "Email channel: SMTP port; 0 = 587 (465 with security tls)."},
	{"AUTOMATION_SMTP_SECURITY", Local | Azure, "starttls", "Email channel: starttls (required), opportunistic, tls (implicit, port 465) or none (local test servers only)."},
	{"AUTOMATION_SMTP_USERNAME", Local | Azure, "", "Email channel: SMTP AUTH user (with AUTOMATION_SMTP_PASSWORD)."},
	{"AUTOMATION_SMTP_PASSWORD", Local | Azure, "", "Email channel: SMTP AUTH password. In Azure a Key Vault reference."},
	{"AUTOMATION_SMTP_FROM", Local | Azure, "", "Email channel: sender address, e.g. Reminders <noreply@example.com>; required with AUTOMATION_SMTP_HOST."},
	{"AUTOMATION_FCM_CREDENTIALS", Local | Azure, "", "Push channel: the Google service-account key file (JSON) of the Firebase project. Empty: no push channel. In Azure a Key Vault reference."},
	{"AUTOMATION_FCM_PROJECT_ID", Local | Azure, "", "Push channel: the Firebase project id; empty: the key file's project_id."},
	{"AUTOMATION_FCM_ENDPOINT", Local | Azure, "", "Push channel: FCM base URL; empty: https://fcm.googleapis.com (the simulator's URL locally)."},
	{"AUTOMATION_FCM_TIMEOUT_SECONDS", Local | Azure, "10", "Push channel: timeout of one send to one device, seconds (1..300)."},
	{"AUTOMATION_ACS_CONNECTION_STRING", Local | Azure, "", "SMS channel: the Azure Communication Services resource's connection string (endpoint=…;accesskey=…). Empty: no sms channel. In Azure a Key Vault reference."},
	{"AUTOMATION_SMS_FROM", Local | Azure, "", "SMS channel: the sender, an E.164 number or short code the ACS resource owns; required with AUTOMATION_ACS_CONNECTION_STRING."},
	{"AUTOMATION_WHATSAPP_CHANNEL_ID", Local | Azure, "", "WhatsApp channel: the channel registration id (a GUID) of the WhatsApp business account connected to the ACS resource of AUTOMATION_ACS_CONNECTION_STRING. Empty: no whatsapp channel."},
	{"AUTOMATION_API_BUSINESS_UNITS", Local | Azure, "*", "HTTP APIs: business units any caller may see at most (comma-separated ids, or *); the X-Automation-Business-Units header, set by the front door, narrows it per request."},
	{"AUTOMATION_OIDC_ISSUER", Local | Azure, "", "HTTP APIs: the OpenID Connect issuer whose JWT bearer tokens are accepted, exactly as their iss (Entra ID: https://login.microsoftonline.com/<tenant id>/v2.0). Empty: no OIDC tokens. Needs AUTOMATION_API_TOKEN (credentials on) and AUTOMATION_OIDC_AUDIENCE."},
	{"AUTOMATION_OIDC_AUDIENCE", Local | Azure, "", "HTTP APIs: the audience OIDC tokens must carry (aud): the app registration's client id or application ID URI."},
	{"AUTOMATION_OIDC_ROLE_CLAIM", Local | Azure, "roles", "HTTP APIs: the OIDC claim holding the caller's roles (ingest, read, operate, admin; Automation.Read is read)."},
	{"AUTOMATION_OIDC_CONSOLE_CLIENT_ID", Local | Azure, "", "Console: the OIDC client (app registration) the console signs people in as, with the authorization-code flow and PKCE (docs/console.md#sign-in). Empty: the console signs in with the bootstrap token only. Needs AUTOMATION_OIDC_ISSUER and AUTOMATION_OIDC_CONSOLE_REDIRECT_URL."},
	{"AUTOMATION_OIDC_CONSOLE_CLIENT_SECRET", Local | Azure, "", "Console: the OIDC client's secret for the code exchange (client_secret_basic). Empty: a public client (PKCE alone). In Azure a Key Vault reference."},
	{"AUTOMATION_OIDC_CONSOLE_REDIRECT_URL", Local | Azure, "", "Console: the redirect URI registered for the console's client, ending in /api/console/oidc/callback (https://<app>.azurewebsites.net/api/console/oidc/callback)."},
	{"AUTOMATION_OIDC_UNITS_CLAIM", Local | Azure, "automation_units", "HTTP APIs: the OIDC claim holding the caller's business units (an array of ids, or \"a,b\", or \"*\")."},
	{"AUTOMATION_OIDC_GROUPS_CLAIM", Local | Azure, "groups", "HTTP APIs and console: the OIDC claim listing the caller's groups (Entra ID: security-group object ids), read with AUTOMATION_OIDC_GROUPS."},
	{"AUTOMATION_OIDC_GROUPS", Local | Azure, "", "HTTP APIs and console: roles and business units granted per group, a JSON object from group id to {\"roles\": [\"operate\"], \"units\": \"bu-a,bu-b\"} (or \"*\"), added to the role and units claims; at most 500 groups (docs/security.md#openid-connect). A console session maps its person's claims again on every request, so a change here applies at the next request. Empty: groups grant nothing."},
	{"AUTOMATION_TRUSTED_PROXIES", Local | Azure, "", "Console sign-in: the peers whose X-Forwarded-For names the client address the sign-in throttle counts (comma-separated IPs or CIDR prefixes, at most 64), read from the right past every trusted hop (docs/security.md#sessions). Empty: none, the peer is the client (local serve: a forged header cannot pick a fresh address). In Azure 127.0.0.1,::1: the Functions host forwards from the loopback, behind the platform's front end."},
	{"AUTOMATION_QUOTA_STREAMS_PER_UNIT", Local | Azure, "50", "Inbox: live inbox streams one business unit may hold open on an instance (1..100000), under the instance's 200; over it that unit's next stream is 429 with Retry-After (docs/security.md#quotas)."},
	{"AUTOMATION_QUOTA_STREAMS_PER_RECIPIENT", Local | Azure, "3", "Inbox: live inbox streams one recipient may hold open in a unit on an instance (1..1000)."},
	{"AUTOMATION_QUOTA_INGEST_EVENTS_PER_SECOND", Local | Azure, "1000", "Event ingest: events per second each API key may post on an instance (1..1000000; a batch of 500 counts 500); over it that key gets 429 with Retry-After. The bootstrap token is not limited."},
	{"AUTOMATION_QUOTA_INGEST_BURST", Local | Azure, "5000", "Event ingest: events an API key may post at once before AUTOMATION_QUOTA_INGEST_EVENTS_PER_SECOND paces it (500..10000000: at least one full batch)."},
	{"AUTOMATION_RECIPIENT_TOKEN_KEYS", Local | Azure, "", "Inbox: the shared secrets recipient tokens are signed with, kid=secret pairs separated by commas (each secret 32 bytes or more; several kids while one rotates); docs/security.md#recipient-tokens. Empty: no recipient tokens. Needs AUTOMATION_API_TOKEN. In Azure a Key Vault reference."},
	{"AUTOMATION_SUPPORT_MAX_RELEASE_PER_MINUTE", Local | Azure, "600", "Support API: the highest rate (rows per minute, 1..60000) a paced release of support holds may ask for; faster requests are rejected."},
	{"ReconciliationSchedule", Local | Azure, "0 */15 * * * *", "NCRONTAB of the Reconciliation timer (bounded repair sweeps, low frequency)."},
	{"AUTOMATION_RECONCILE_BATCH_SIZE", Local | Azure, "100", "Reconciliation: sources or rows per batch (1..1000)."},
	{"AUTOMATION_RECONCILE_MAX_BATCHES", Local | Azure, "50", "Reconciliation: batches per run across every sweep (1..10000)."},
	{"AUTOMATION_RECONCILE_DUE_DAYS", Local | Azure, "14", "Reconciliation: due window of a first source pass, today..today+N days (1..366)."},
	{"AUTOMATION_RECONCILE_BUSINESS_UNITS", Local | Azure, "*", "Reconciliation: business units whose sources are swept (comma-separated ids, or *)."},
	{"AUTOMATION_SOURCE_URLS", Local | Azure, "", "Reconciliation: domain-app list endpoints by source type, SourceType=https://...,Other=https://... (a type without one is swept from the pipeline's own snapshots)."},
	{"AUTOMATION_REPORT_SOURCES", Local | Azure, "", "Report subscriptions: domain report types rendered by an HTTP report source, ReportType=https://...,Other=https://... (the built-in automation-activity report needs none)."},
	{"AUTOMATION_BILLING_URL", Local | Azure, "", "Budgets: base URL of the billing provider (docs/billing.md), https (http only for 127.0.0.1/localhost). Empty: no billing provider, and priced campaign actions are refused before anything is held (free ones run)."},
	{"AUTOMATION_BILLING_TOKEN", Local | Azure, "", "Budgets: bearer token sent to the billing provider. In Azure a Key Vault reference."},
	{"AUTOMATION_BILLING_TIMEOUT_SECONDS", Local | Azure, "10", "Budgets: one billing call's timeout, seconds (1..300); a charge that reaches it is UNKNOWN and reconciled (docs/billing.md)."},
	{"AUTOMATION_IDEMPOTENCY_RETENTION_HOURS", Local | Azure, "168", "Idempotency-Key records older than this are purged by Reconciliation (1..8760)."},
	{"AUTOMATION_CHANNEL_LIMITS", Local | Azure, "", `Channels: each delivery channel's provider limits, a JSON object {"<channel>":{"concurrency","ratePerSecond","timeoutSeconds"}} (docs/configuration.md#channel-limits), shared by deliveries and campaign actions. Empty: 4 in flight per channel, no rate limit, no timeout beyond the channel's own.`},
	{"AUTOMATION_CAMPAIGN_PROVIDERS", Local | Azure, "", `Campaigns: HTTP action providers, a JSON array of {"name","baseUrl","actionTypes":[...],"dedupe","lookup","concurrency","ratePerSecond","timeoutSeconds"} (docs/campaigns.md#configured-providers). Empty: none beside the delivery channels.`},
	{"AUTOMATION_CAMPAIGN_PROVIDER_TOKENS", Local | Azure, "", `Campaigns: bearer tokens of the HTTP action providers, a JSON object {"<provider name>":"<token>"}; a provider without one sends no Authorization header. In Azure a Key Vault reference.`},
	{"OTEL_SDK_DISABLED", Local, "false", "OpenTelemetry: true turns every span and metric off, whatever else is set (docs/observability.md)."},
	{"OTEL_EXPORTER_OTLP_ENDPOINT", Local, "", "OpenTelemetry: OTLP/HTTP base URL (http://127.0.0.1:4318); traces go to /v1/traces, metrics to /v1/metrics. Empty: no OTLP export, and no spans are recorded. In Azure: the collector or Azure Monitor OTLP endpoint (docs/deploy.md#application-insights)."},
	{"OTEL_EXPORTER_OTLP_HEADERS", Local, "", "OpenTelemetry: headers sent with every export, key=value pairs separated by commas (values URL-encoded), e.g. an API key. A secret."},
	{"OTEL_SERVICE_NAME", Local, "automation", "OpenTelemetry: the service.name resource attribute."},
	{"OTEL_RESOURCE_ATTRIBUTES", Local, "", "OpenTelemetry: further resource attributes, key=value pairs separated by commas (deployment.environment.name=prod)."},
	{"OTEL_TRACES_SAMPLER", Local, "parentbased_traceidratio", "OpenTelemetry: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio (a message's sampled flag is followed; new traces at the ratio)."},
	{"OTEL_TRACES_SAMPLER_ARG", Local, "0.1", "OpenTelemetry: the ratio of the *traceidratio samplers, 0..1."},
	{"OTEL_METRICS_EXPORTER", Local, "otlp", "OpenTelemetry: where metrics go, comma-separated: otlp (with OTEL_EXPORTER_OTLP_ENDPOINT), prometheus (GET /metrics, guarded by AUTOMATION_METRICS_TOKEN or the API token), none."},
	{"OTEL_METRIC_EXPORT_INTERVAL", Local, "60000", "OpenTelemetry: OTLP metric export interval, milliseconds (1000..3600000)."},
	{"AUTOMATION_METRICS_TOKEN", Local, "", "GET /metrics (Prometheus scrape): when set, the scraper must send Authorization: Bearer <token>; empty: the API token's guard (AUTOMATION_API_TOKEN) applies."},
	{"AUTOMATION_ATTRIBUTE_DEDUPE_WINDOW_HOURS", Local | Azure, "840", "Attributes: processed-event ids older than this are purged on the OutboxRelay timer, at most hourly (24..8760; 840 = 35 days, longer than any source may redeliver an event: docs/attributes.md#retention)."},
}

// SecretSettings are the settings whose values are secrets: in Azure they are Key Vault
// references ("@Microsoft.KeyVault(SecretUri=...)") resolved by the platform, and no error
// or log line ever shows their value. Load refuses an unresolved reference in any setting.
var SecretSettings = []string{"AUTOMATION_WEBHOOK_SECRET", "AUTOMATION_WEBHOOK_PREVIOUS_SECRET", "AUTOMATION_SMTP_PASSWORD", "AUTOMATION_FCM_CREDENTIALS", "AUTOMATION_ACS_CONNECTION_STRING", "AUTOMATION_API_TOKEN", "AUTOMATION_OIDC_CONSOLE_CLIENT_SECRET", "AUTOMATION_BILLING_TOKEN",
	"AUTOMATION_RECIPIENT_TOKEN_KEYS",
	"AUTOMATION_SQLSERVER_DSN", "AUTOMATION_SERVICEBUS_CONNECTION", "AUTOMATION_STORAGE_CONNECTION",
	"AUTOMATION_CAMPAIGN_PROVIDER_TOKENS", "OTEL_EXPORTER_OTLP_HEADERS", "AUTOMATION_METRICS_TOKEN"}

// keyVaultReferencePrefix starts an App Service / Functions Key Vault reference
// ("Use Key Vault references as app settings"): @Microsoft.KeyVault(SecretUri=...) or
// @Microsoft.KeyVault(VaultName=...;SecretName=...).
const keyVaultReferencePrefix = "@microsoft.keyvault("

// IsUnresolvedKeyVaultReference reports whether v still is a Key Vault reference: after
// surrounding white space, it starts with "@Microsoft.KeyVault(" (any letter case). The
// platform replaces a reference it resolved with the secret, so seeing one means it failed.
func IsUnresolvedKeyVaultReference(v string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), keyVaultReferencePrefix)
}

// Mode selects how DueWorkPoller executes claimed rows.
type Mode string

// DueWork modes.
const (
	ModeInline Mode = "inline"
	ModeFanout Mode = "fanout"
)

// Config is the validated configuration.
type Config struct {
	CustomHandlerPort    string
	SQLServerDSN         string
	DataDir              string
	ServiceBusConnection string
	ServiceBusNamespace  string
	StorageConnection    string
	StorageTableURL      string
	StorageBlobURL       string
	AzureClientID        string
	DueWorkSchedule      string
	OutboxRelaySchedule  string
	// RelayAfterPoll: an inline poll relays its outbox messages at once (commit path).
	RelayAfterPoll bool
	// EagerPublish: each process publishes the outbox rows it commits right after the
	// commit (delivery.Pump); RelayBudget bounds one relay drain; IngestMaxBacklog is the
	// backpressure bound of ingest, in unpublished outbox rows (0: off).
	EagerPublish bool
	// ConsumerConcurrency is the embedded runtime's consumers per in-process destination.
	ConsumerConcurrency map[string]int
	// ConsumerBatch is the most messages a batch function takes at once per in-process
	// destination (AUTOMATION_CONSUMER_BATCH; a destination not in it: 100).
	ConsumerBatch map[string]int
	RelayBudget   time.Duration
	// MemoryLimitMiB is the Go runtime's soft memory limit (0: none; app.ApplyMemoryLimit).
	MemoryLimitMiB int
	// SQLiteGroupCommit is the embedded store's group commit bound (sqlite.Options.GroupCommit).
	SQLiteGroupCommit  int
	IngestMaxBacklog   int
	DueWorkMode        Mode
	DueWorkBatchSize   int
	DueWorkConcurrency int
	// DueWorkDrainBatches bounds the batches of one inline poll run: 1 is one batch
	// (Poller.RunOnce); more drains with one batch ahead (Poller.Drain).
	DueWorkDrainBatches int
	Lease               time.Duration
	// BatchDeadline bounds how long a batch invocation keeps starting work
	// (handler.Deps.BatchDeadline).
	BatchDeadline    time.Duration
	LogLevel         string
	APIToken         string
	APIBusinessUnits string // "*" or comma-separated business-unit ids
	// OIDC configures JWT bearer tokens (docs/security.md#openid-connect); Issuer "" means none.
	OIDC OIDCConfig
	// RecipientTokenKeys signs recipient tokens: "kid=secret,…" (shared/recipienttoken).
	RecipientTokenKeys string
	// Preferences configures recipient preferences (docs/channels.md#recipient-preferences).
	Preferences PreferencesConfig
	// Quotas are the per-tenant quotas under the global caps (docs/security.md#quotas).
	Quotas QuotaConfig
	// TrustedProxies are the peers whose X-Forwarded-For is believed by the console's
	// sign-in throttle (AUTOMATION_TRUSTED_PROXIES; single IPs as /32 or /128); nil: none.
	TrustedProxies []netip.Prefix
	// SupportMaxReleasePerMinute bounds the rate of a paced release of support holds.
	SupportMaxReleasePerMinute int
	Webhook                    WebhookConfig
	SMTP                       SMTPConfig
	FCM                        FCMConfig
	ACS                        ACSConfig
	// Reconciliation (docs/architecture.md#reconciliation).
	ReconciliationSchedule string
	ReconcileBatchSize     int
	ReconcileMaxBatches    int
	ReconcileDueDays       int
	ReconcileBusinessUnits string            // "*" or comma-separated business-unit ids
	SourceURLs             map[string]string // source type → domain-app list endpoint
	ReportSources          map[string]string // report type → HTTP report source URL
	IdempotencyRetention   time.Duration
	// ChannelLimits bound each delivery channel's provider, by channel name
	// (AUTOMATION_CHANNEL_LIMITS); a channel not named takes the defaults.
	ChannelLimits map[string]ChannelLimitConfig
	// CampaignProviders are the HTTP action providers (AUTOMATION_CAMPAIGN_PROVIDERS, with
	// their tokens from AUTOMATION_CAMPAIGN_PROVIDER_TOKENS), in the order given.
	CampaignProviders []CampaignProviderConfig
	// AttributeDedupeWindow is how long an attribute event id is remembered
	// (AUTOMATION_ATTRIBUTE_DEDUPE_WINDOW_HOURS).
	AttributeDedupeWindow time.Duration
	// Billing is the billing provider of priced campaign actions (docs/billing.md).
	Billing BillingConfig
	// Telemetry is the OpenTelemetry setup (the OTEL_* variables; docs/observability.md).
	Telemetry TelemetryConfig
}

// TelemetryConfig is read from the standard OpenTelemetry variables (the SDK is given these
// values explicitly, so this package stays the only reader of the environment).
type TelemetryConfig struct {
	Disabled           bool              // OTEL_SDK_DISABLED
	Endpoint           string            // OTEL_EXPORTER_OTLP_ENDPOINT; "" = no OTLP export
	Headers            map[string]string // OTEL_EXPORTER_OTLP_HEADERS
	ServiceName        string            // OTEL_SERVICE_NAME
	ResourceAttributes map[string]string // OTEL_RESOURCE_ATTRIBUTES
	Sampler            string            // OTEL_TRACES_SAMPLER
	SamplerRatio       float64           // OTEL_TRACES_SAMPLER_ARG, 0..1
	MetricsOTLP        bool              // OTEL_METRICS_EXPORTER has otlp
	MetricsPrometheus  bool              // OTEL_METRICS_EXPORTER has prometheus
	MetricInterval     time.Duration     // OTEL_METRIC_EXPORT_INTERVAL
	// MetricsToken guards GET /metrics ("" = the API token's guard).
	MetricsToken string
}

// BillingConfig locates the billing provider; URL "" = none (priced actions are refused).
// Timeout bounds one call (AUTOMATION_BILLING_TIMEOUT_SECONDS, default 10 s).
type BillingConfig struct {
	URL     string
	Token   string
	Timeout time.Duration
}

// CampaignProviderConfig is one HTTP action provider (docs/campaigns.md#configured-providers).
// Zero limits take the campaign defaults: Concurrency 4 calls in flight, RatePerSecond
// unlimited, Timeout 10 s.
type CampaignProviderConfig struct {
	Name          string
	BaseURL       string   // https (http only for 127.0.0.1/localhost/[::1])
	ActionTypes   []string // the action types it serves, e.g. TOP_UP
	Dedupe        bool     // it deduplicates by Idempotency-Key
	Lookup        bool     // it answers GET {baseUrl}/actions/{effectKey}
	Concurrency   int
	RatePerSecond float64
	Timeout       time.Duration
	Token         string // bearer token ("" none); a secret, never shown
}

// WebhookConfig configures the webhook channel; Secret "" means no webhook channel.
type WebhookConfig struct {
	Secret               string
	PreviousSecret       string // a key being rotated out; "" = none
	Idempotent           bool
	AllowPrivateNetworks bool
	Timeout              time.Duration
}

// SMTPConfig configures the email channel; Host "" means no email channel.
type SMTPConfig struct {
	Host               string
	Port               int    // 0: the default for Security
	Security           string // starttls | opportunistic | tls | none
	Username, Password string
	From               string
}

// FCMConfig configures the push channel (docs/channels.md#push).
type FCMConfig struct {
	Credentials string // the service-account key file's JSON; "" = no push channel
	ProjectID   string // "" = the key file's project_id
	Endpoint    string // "" = https://fcm.googleapis.com
	Timeout     time.Duration
}

// ACSConfig configures the SMS channel (docs/channels.md#sms).
type ACSConfig struct {
	ConnectionString string // "" = no sms channel
	SMSFrom          string // the sender number or short code
	// WhatsAppChannelID is the WhatsApp channel registration (a GUID); "" = no whatsapp channel.
	WhatsAppChannelID string
}

// PreferencesConfig configures recipient preferences and one-click unsubscribe.
type PreferencesConfig struct {
	Categories        string // JSON of a preference.Registry; "" = the default set
	UnsubscribeURL    string // https URL of the unsubscribe route; "" = no link
	UnsubscribeSecret string // signs the links' tokens; "" = no link
}

// UsesSQLServer reports whether the SQL Server store is configured.
func (c Config) UsesSQLServer() bool { return c.SQLServerDSN != "" }

// UsesServiceBus reports whether Service Bus is configured.
func (c Config) UsesServiceBus() bool {
	return c.ServiceBusConnection != "" || c.ServiceBusNamespace != ""
}

// UsesAzureStorage reports whether Table/Blob trace storage is configured.
func (c Config) UsesAzureStorage() bool {
	return c.StorageConnection != "" || c.StorageTableURL != "" || c.StorageBlobURL != ""
}

// Lookup resolves a %Setting% reference of function.json (funchost.ResolveSetting) from
// the validated configuration.
func (c Config) Lookup(name string) (string, bool) {
	switch name {
	case "DueWorkSchedule":
		return c.DueWorkSchedule, true
	case "OutboxRelaySchedule":
		return c.OutboxRelaySchedule, true
	case "ReconciliationSchedule":
		return c.ReconciliationSchedule, true
	}
	return "", false
}

// Load reads the settings through getenv (os.Getenv in production, a map in tests),
// applies defaults and validates. All problems are reported together, each naming its
// variable.
func Load(getenv func(string) string) (Config, error) {
	// An app setting whose Key Vault reference the platform could not resolve keeps the
	// reference text as its value. For a secret that text would pass every other check (a
	// webhook key of more than 16 bytes) and sign with the wrong key, silently: refuse it,
	// naming the setting and never the value; other checks see the default instead, so the
	// one error is this one.
	unresolved := map[string]bool{}
	for _, s := range Settings {
		if IsUnresolvedKeyVaultReference(getenv(s.Name)) {
			unresolved[s.Name] = true
		}
	}
	get := func(name string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" && !unresolved[name] {
			return v
		}
		for _, s := range Settings {
			if s.Name == name {
				return s.Default
			}
		}
		panic("config: undeclared setting " + name)
	}
	var errs []error
	bad := func(name, f string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: "+f, append([]any{name}, a...)...))
	}
	for _, s := range Settings {
		if unresolved[s.Name] {
			bad(s.Name, "is an unresolved Key Vault reference: the platform could not read the secret (check the identity's Key Vault Secrets User role on the vault, the site's keyVaultReferenceIdentity and the secret URI); refusing to start")
		}
	}
	num := func(name string, lo, hi int) int {
		v, err := strconv.Atoi(get(name))
		if err != nil || v < lo || v > hi {
			bad(name, "must be a whole number from %d to %d, got %q", lo, hi, get(name))
		}
		return v
	}
	c := Config{
		CustomHandlerPort:    get("FUNCTIONS_CUSTOMHANDLER_PORT"),
		SQLServerDSN:         get("AUTOMATION_SQLSERVER_DSN"),
		DataDir:              get("AUTOMATION_DATA_DIR"),
		ServiceBusConnection: get("AUTOMATION_SERVICEBUS_CONNECTION"),
		ServiceBusNamespace:  get("AUTOMATION_SERVICEBUS_NAMESPACE"),
		StorageConnection:    get("AUTOMATION_STORAGE_CONNECTION"),
		StorageTableURL:      get("AUTOMATION_STORAGE_TABLE_URL"),
		StorageBlobURL:       get("AUTOMATION_STORAGE_BLOB_URL"),
		AzureClientID:        get("AZURE_CLIENT_ID"),
		DueWorkSchedule:      get("DueWorkSchedule"),
		OutboxRelaySchedule:  get("OutboxRelaySchedule"),
		DueWorkMode:          Mode(strings.ToLower(get("AUTOMATION_DUEWORK_MODE"))),
		DueWorkBatchSize:     num("AUTOMATION_DUEWORK_BATCH_SIZE", 1, 1000),
		DueWorkConcurrency:   num("AUTOMATION_DUEWORK_CONCURRENCY", 1, 64),
		DueWorkDrainBatches:  num("AUTOMATION_DUEWORK_DRAIN_BATCHES", 1, 1000),
		Lease:                time.Duration(num("AUTOMATION_LEASE_SECONDS", 30, 3600)) * time.Second,
		BatchDeadline:        time.Duration(num("AUTOMATION_BATCH_DEADLINE_SECONDS", 1, 299)) * time.Second,
		RelayBudget:          time.Duration(num("AUTOMATION_RELAY_BUDGET_MS", 100, 240000)) * time.Millisecond,
		SQLiteGroupCommit:    num("AUTOMATION_SQLITE_GROUP_COMMIT", 1, 1000),
		MemoryLimitMiB:       num("AUTOMATION_MEMORY_LIMIT_MIB", 0, 1<<20),
		IngestMaxBacklog:     num("AUTOMATION_INGEST_MAX_BACKLOG", 0, 10_000_000),
		LogLevel:             strings.ToLower(get("AUTOMATION_LOG_LEVEL")),
		APIToken:             get("AUTOMATION_API_TOKEN"),
		APIBusinessUnits:     get("AUTOMATION_API_BUSINESS_UNITS"),
		OIDC: OIDCConfig{Issuer: get("AUTOMATION_OIDC_ISSUER"), Audience: get("AUTOMATION_OIDC_AUDIENCE"),
			RoleClaim: get("AUTOMATION_OIDC_ROLE_CLAIM"), UnitsClaim: get("AUTOMATION_OIDC_UNITS_CLAIM"),
			GroupsClaim: get("AUTOMATION_OIDC_GROUPS_CLAIM"), Groups: get("AUTOMATION_OIDC_GROUPS"),
			ConsoleClientID: get("AUTOMATION_OIDC_CONSOLE_CLIENT_ID"), ConsoleClientSecret: get("AUTOMATION_OIDC_CONSOLE_CLIENT_SECRET"),
			ConsoleRedirectURL: get("AUTOMATION_OIDC_CONSOLE_REDIRECT_URL")},
		RecipientTokenKeys: get("AUTOMATION_RECIPIENT_TOKEN_KEYS"),
		Preferences: PreferencesConfig{Categories: get("AUTOMATION_NOTIFICATION_CATEGORIES"), UnsubscribeURL: get("AUTOMATION_UNSUBSCRIBE_URL"),
			UnsubscribeSecret: get("AUTOMATION_UNSUBSCRIBE_SECRET")},
		Quotas: QuotaConfig{StreamsPerUnit: num("AUTOMATION_QUOTA_STREAMS_PER_UNIT", 1, 100_000),
			StreamsPerRecipient:   num("AUTOMATION_QUOTA_STREAMS_PER_RECIPIENT", 1, 1000),
			IngestEventsPerSecond: num("AUTOMATION_QUOTA_INGEST_EVENTS_PER_SECOND", 1, 1_000_000),
			IngestBurst:           num("AUTOMATION_QUOTA_INGEST_BURST", 500, 10_000_000)},
		Webhook: WebhookConfig{Secret: get("AUTOMATION_WEBHOOK_SECRET"), PreviousSecret: get("AUTOMATION_WEBHOOK_PREVIOUS_SECRET"),
			Timeout: time.Duration(num("AUTOMATION_WEBHOOK_TIMEOUT_SECONDS", 1, 300)) * time.Second},
		SupportMaxReleasePerMinute: num("AUTOMATION_SUPPORT_MAX_RELEASE_PER_MINUTE", 1, 60000),
		SMTP: SMTPConfig{Host: get("AUTOMATION_SMTP_HOST"), Port: num("AUTOMATION_SMTP_PORT", 0, 65535),
			Security: strings.ToLower(get("AUTOMATION_SMTP_SECURITY")), Username: get("AUTOMATION_SMTP_USERNAME"),
			Password: get("AUTOMATION_SMTP_PASSWORD"), From: get("AUTOMATION_SMTP_FROM")},
		FCM: FCMConfig{Credentials: get("AUTOMATION_FCM_CREDENTIALS"), ProjectID: get("AUTOMATION_FCM_PROJECT_ID"),
			Endpoint: get("AUTOMATION_FCM_ENDPOINT"), Timeout: time.Duration(num("AUTOMATION_FCM_TIMEOUT_SECONDS", 1, 300)) * time.Second},
		ACS:                    ACSConfig{ConnectionString: get("AUTOMATION_ACS_CONNECTION_STRING"), SMSFrom: get("AUTOMATION_SMS_FROM")},
		ReconciliationSchedule: get("ReconciliationSchedule"),
		ReconcileBatchSize:     num("AUTOMATION_RECONCILE_BATCH_SIZE", 1, 1000),
		ReconcileMaxBatches:    num("AUTOMATION_RECONCILE_MAX_BATCHES", 1, 10000),
		ReconcileDueDays:       num("AUTOMATION_RECONCILE_DUE_DAYS", 1, 366),
		ReconcileBusinessUnits: get("AUTOMATION_RECONCILE_BUSINESS_UNITS"),
		IdempotencyRetention:   time.Duration(num("AUTOMATION_IDEMPOTENCY_RETENTION_HOURS", 1, 8760)) * time.Hour,
		AttributeDedupeWindow:  time.Duration(num("AUTOMATION_ATTRIBUTE_DEDUPE_WINDOW_HOURS", 24, 8760)) * time.Hour,
	}
	for name, dst := range map[string]*bool{"AUTOMATION_WEBHOOK_IDEMPOTENT": &c.Webhook.Idempotent, "AUTOMATION_RELAY_AFTER_POLL": &c.RelayAfterPoll, "AUTOMATION_EAGER_PUBLISH": &c.EagerPublish,
		"AUTOMATION_WEBHOOK_ALLOW_PRIVATE_NETWORKS": &c.Webhook.AllowPrivateNetworks} {
		switch v := strings.ToLower(get(name)); v {
		case "true", "false":
			*dst = v == "true"
		default:
			bad(name, "must be true or false, got %q", v)
		}
	}
	// countPairs fills into from name's value v: "destination=count" pairs separated by
	// commas, each count 1..most; a pair that is not one is reported (bad) and skipped.
	countPairs := func(name, v string, most int, into map[string]int) {
		for _, pair := range strings.Split(v, ",") {
			d, n, ok := strings.Cut(strings.TrimSpace(pair), "=")
			k, err := strconv.Atoi(strings.TrimSpace(n))
			if !ok || strings.TrimSpace(d) == "" || err != nil || k < 1 || k > most {
				bad(name, "must be destination=count pairs separated by commas (count 1..%d), got %q", most, pair)
				continue
			}
			into[strings.TrimSpace(d)] = k
		}
	}
	c.ConsumerConcurrency = map[string]int{}
	if v := get("AUTOMATION_CONSUMER_CONCURRENCY"); v != "none" {
		countPairs("AUTOMATION_CONSUMER_CONCURRENCY", v, 16, c.ConsumerConcurrency)
	}
	c.ConsumerBatch = map[string]int{}
	if v := strings.TrimSpace(get("AUTOMATION_CONSUMER_BATCH")); v != "" {
		countPairs("AUTOMATION_CONSUMER_BATCH", v, 1000, c.ConsumerBatch)
	}
	if s := c.Preferences.UnsubscribeSecret; s != "" && len(s) < 32 {
		bad("AUTOMATION_UNSUBSCRIBE_SECRET", "must be at least 32 bytes (got %d)", len(s))
	}
	if u := c.Preferences.UnsubscribeURL; u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://127.0.0.1") && !strings.HasPrefix(u, "http://localhost") {
		bad("AUTOMATION_UNSUBSCRIBE_URL", "must be an https URL (RFC 8058; http only on 127.0.0.1 or localhost), got %q", u)
	}
	if s := c.Webhook.Secret; s != "" && len(s) < 16 {
		bad("AUTOMATION_WEBHOOK_SECRET", "must be at least 16 bytes (got %d)", len(s))
	}
	switch c.SMTP.Security {
	case "starttls", "opportunistic", "tls", "none":
	default:
		bad("AUTOMATION_SMTP_SECURITY", "must be starttls, opportunistic, tls or none, got %q", c.SMTP.Security)
	}
	if c.ACS.ConnectionString != "" && c.ACS.SMSFrom == "" && c.ACS.WhatsAppChannelID == "" {
		bad("AUTOMATION_SMS_FROM", "is required with AUTOMATION_ACS_CONNECTION_STRING (or AUTOMATION_WHATSAPP_CHANNEL_ID, for WhatsApp only)")
	}
	if c.ACS.WhatsAppChannelID != "" && c.ACS.ConnectionString == "" {
		bad("AUTOMATION_WHATSAPP_CHANNEL_ID", "needs AUTOMATION_ACS_CONNECTION_STRING")
	}
	if c.SMTP.Host != "" && c.SMTP.From == "" {
		bad("AUTOMATION_SMTP_FROM", "is required when AUTOMATION_SMTP_HOST is set")
	}
	if (c.SMTP.Username == "") != (c.SMTP.Password == "") {
		bad("AUTOMATION_SMTP_USERNAME", "set both AUTOMATION_SMTP_USERNAME and AUTOMATION_SMTP_PASSWORD, or neither")
	}
	c.Billing = BillingConfig{URL: strings.TrimRight(get("AUTOMATION_BILLING_URL"), "/"), Token: get("AUTOMATION_BILLING_TOKEN"),
		Timeout: time.Duration(num("AUTOMATION_BILLING_TIMEOUT_SECONDS", 1, 300)) * time.Second}
	if v := c.Billing.URL; v != "" {
		if _, err := parseSourceURLs("billing=" + v); err != nil {
			bad("AUTOMATION_BILLING_URL", "must be an https URL (http only for 127.0.0.1/localhost)")
		}
	}
	if c.Billing.Token != "" && c.Billing.URL == "" {
		bad("AUTOMATION_BILLING_TOKEN", "is set but AUTOMATION_BILLING_URL is not")
	}
	c.SourceURLs = parsed(get, bad, "AUTOMATION_SOURCE_URLS", parseSourceURLs)
	c.ReportSources = parsed(get, bad, "AUTOMATION_REPORT_SOURCES", parseSourceURLs)
	c.ChannelLimits = parsed(get, bad, "AUTOMATION_CHANNEL_LIMITS", parseChannelLimits)
	if ps, err := parseCampaignProviders(get("AUTOMATION_CAMPAIGN_PROVIDERS")); err != nil {
		bad("AUTOMATION_CAMPAIGN_PROVIDERS", "%v", err)
	} else if err := addProviderTokens(ps, get("AUTOMATION_CAMPAIGN_PROVIDER_TOKENS")); err != nil {
		bad("AUTOMATION_CAMPAIGN_PROVIDER_TOKENS", "%v", err)
	} else {
		c.CampaignProviders = ps
	}
	if p := c.CustomHandlerPort; p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			bad("FUNCTIONS_CUSTOMHANDLER_PORT", "must be a port number 1..65535, got %q", p)
		}
	}
	if c.DueWorkMode != ModeInline && c.DueWorkMode != ModeFanout {
		bad("AUTOMATION_DUEWORK_MODE", "must be inline or fanout, got %q", c.DueWorkMode)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("AUTOMATION_LOG_LEVEL", "must be debug, info, warn or error, got %q", c.LogLevel)
	}
	if c.ServiceBusConnection != "" && c.ServiceBusNamespace != "" {
		bad("AUTOMATION_SERVICEBUS_CONNECTION", "set either it or AUTOMATION_SERVICEBUS_NAMESPACE, not both")
	}
	if c.ServiceBusNamespace != "" && (strings.Contains(c.ServiceBusNamespace, "/") || !strings.Contains(c.ServiceBusNamespace, ".")) {
		bad("AUTOMATION_SERVICEBUS_NAMESPACE", "must be a host name like <name>.servicebus.windows.net, got %s", shownHost(c.ServiceBusNamespace))
	}
	if c.StorageConnection == "" && (c.StorageTableURL != "") != (c.StorageBlobURL != "") {
		bad("AUTOMATION_STORAGE_TABLE_URL", "set both AUTOMATION_STORAGE_TABLE_URL and AUTOMATION_STORAGE_BLOB_URL, or a connection string")
	}
	for name, v := range map[string]string{"AUTOMATION_STORAGE_TABLE_URL": c.StorageTableURL, "AUTOMATION_STORAGE_BLOB_URL": c.StorageBlobURL} {
		if v == "" {
			continue
		}
		if u, err := url.Parse(v); err != nil || (u.Scheme != "https" && u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") || u.Host == "" {
			bad(name, "must be an https URL (http only for 127.0.0.1/localhost), got %s", shownURL(v))
		}
	}
	if strings.Contains(strings.ToLower(c.StorageConnection), "usedevelopmentstorage=true") {
		bad("AUTOMATION_STORAGE_CONNECTION", "the Go SDKs need the explicit devstoreaccount1 connection string, not UseDevelopmentStorage=true")
	}
	if c.DataDir == "" {
		bad("AUTOMATION_DATA_DIR", "must not be empty")
	}
	if o := c.OIDC; o.Issuer != "" || o.Audience != "" {
		switch u, err := url.Parse(o.Issuer); {
		case o.Issuer == "" || o.Audience == "":
			bad("AUTOMATION_OIDC_ISSUER", "and AUTOMATION_OIDC_AUDIENCE are set together")
		case err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname()))):
			bad("AUTOMATION_OIDC_ISSUER", "must be an https URL (http only for 127.0.0.1/localhost), got %q", o.Issuer)
		case c.APIToken == "":
			bad("AUTOMATION_OIDC_ISSUER", "needs AUTOMATION_API_TOKEN: without it the APIs take no credentials")
		}
	}
	if o := c.OIDC; o.ConsoleClientID != "" || o.ConsoleRedirectURL != "" || o.ConsoleClientSecret != "" {
		switch u, err := url.Parse(o.ConsoleRedirectURL); {
		case o.Issuer == "":
			bad("AUTOMATION_OIDC_CONSOLE_CLIENT_ID", "needs AUTOMATION_OIDC_ISSUER")
		case o.ConsoleClientID == "" || o.ConsoleRedirectURL == "":
			bad("AUTOMATION_OIDC_CONSOLE_CLIENT_ID", "and AUTOMATION_OIDC_CONSOLE_REDIRECT_URL are set together")
		case err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname()))) || !strings.HasSuffix(u.Path, "/api/console/oidc/callback"):
			bad("AUTOMATION_OIDC_CONSOLE_REDIRECT_URL", "must be an https URL (http only for 127.0.0.1/localhost) ending in /api/console/oidc/callback, got %q", o.ConsoleRedirectURL)
		}
	}
	if g := strings.TrimSpace(c.OIDC.Groups); g != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(g), &m); err != nil {
			bad("AUTOMATION_OIDC_GROUPS", "must be a JSON object from group id to {\"roles\": [...], \"units\": \"a,b\"}: %v", err)
		}
	}
	if c.RecipientTokenKeys != "" && c.APIToken == "" {
		bad("AUTOMATION_RECIPIENT_TOKEN_KEYS", "needs AUTOMATION_API_TOKEN: without it the APIs take no credentials")
	}
	c.TrustedProxies = parsed(get, bad, "AUTOMATION_TRUSTED_PROXIES", parsePrefixes)
	c.Telemetry = loadTelemetry(get, bad)
	return c, errors.Join(errs...)
}

// parsed is parse of the variable name's value (get), or, when parse refuses it, the zero
// value after bad(name, parse's error): the setting is left unset and Load fails naming it.
func parsed[T any](get func(string) string, bad func(name, f string, a ...any), name string, parse func(string) (T, error)) T {
	v, err := parse(get(name))
	if err != nil {
		bad(name, "%v", err)
		var zero T
		return zero
	}
	return v
}

// maxTrustedProxies bounds AUTOMATION_TRUSTED_PROXIES (each request's address walks them).
const maxTrustedProxies = 64

// parsePrefixes reads "IP,IP/bits,…" (IPv4 or IPv6; a single IP is a /32 or /128 prefix; an
// IPv4-mapped IPv6 address or prefix is read as its IPv4 one).
func parsePrefixes(v string) ([]netip.Prefix, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out []netip.Prefix
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		p, err := netip.ParsePrefix(part)
		if err != nil {
			a, aerr := netip.ParseAddr(part)
			if aerr != nil || a.Zone() != "" {
				return nil, fmt.Errorf("want IP addresses or CIDR prefixes separated by commas, got %q", part)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		if p.Addr().Is4In6() {
			// An IPv4-mapped prefix (::ffff:a.b.c.d/96+bits) names IPv4 peers, and the client
			// address is read unmapped (session.ClientAddress): kept as IPv6 it would match none.
			if p.Bits() < 96 {
				return nil, fmt.Errorf("an IPv4-mapped prefix needs 96 bits or more, got %q", part)
			}
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	if len(out) > maxTrustedProxies {
		return nil, fmt.Errorf("at most %d entries, got %d", maxTrustedProxies, len(out))
	}
	return out, nil
}

// parseSourceURLs reads "Type=https://...,Other=https://..." (http only for
// 127.0.0.1/localhost).
func parseSourceURLs(v string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(v) == "" {
		return out, nil
	}
	for _, part := range strings.Split(v, ",") {
		typ, raw, ok := strings.Cut(strings.TrimSpace(part), "=")
		typ, raw = strings.TrimSpace(typ), strings.TrimSpace(raw)
		if !ok || typ == "" || raw == "" || !sourceTypeRE.MatchString(typ) {
			return nil, fmt.Errorf("want SourceType=URL pairs separated by commas, got %s", shownURL(strings.TrimSpace(part)))
		}
		if _, dup := out[typ]; dup {
			return nil, fmt.Errorf("source type %q given twice", typ)
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost"))) {
			return nil, fmt.Errorf("%s: %s must be an https URL (http only for 127.0.0.1/localhost)", typ, shownURL(raw))
		}
		out[typ] = raw
	}
	return out, nil
}

// sourceTypeRE is what a source or report type in AUTOMATION_SOURCE_URLS and
// AUTOMATION_REPORT_SOURCES looks like; anything else is a misplaced "=" (a URL's query).
var sourceTypeRE = regexp.MustCompile(`^[A-Za-z0-9._~@+/-]{1,100}$`)

// hostRE is a bare host name.
var hostRE = regexp.MustCompile(`^[A-Za-z0-9.-]{1,253}$`)

// shownURL is how an error shows a refused URL setting: scheme, host and path only. The
// user info and the query may carry credentials (a password, a SAS signature, a function
// key: "?code=…"), so they are replaced by "…"; a value that is no URL is not shown at all.
func shownURL(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return fmt.Sprintf("a value of %d characters that is no absolute URL (not shown)", len(v))
	}
	host := u.Host
	if u.User != nil {
		host = "…@" + host
	}
	shown := u.Scheme + "://" + host + u.EscapedPath()
	if u.RawQuery != "" || u.ForceQuery {
		shown += "?…"
	}
	if u.Fragment != "" {
		shown += "#…"
	}
	return strconv.Quote(shown)
}

// shownHost is how an error shows a refused host-name setting: quoted when it is a bare host
// name, else not at all (it may be a connection string pasted into the wrong setting).
func shownHost(v string) string {
	if hostRE.MatchString(v) {
		return strconv.Quote(v)
	}
	return fmt.Sprintf("a value of %d characters that is no host name (not shown: it may be a connection string)", len(v))
}

// OIDCConfig configures OpenID Connect bearer tokens for the HTTP APIs.
type OIDCConfig struct {
	Issuer, Audience      string
	RoleClaim, UnitsClaim string
	// GroupsClaim names the groups claim; Groups is the JSON grant per group
	// (oidcauth.ParseGroups reads it; Load checks it is a JSON object).
	GroupsClaim, Groups string
	// ConsoleClientID, ConsoleClientSecret and ConsoleRedirectURL are the console's own
	// client for the authorization-code flow with PKCE (docs/console.md#sign-in); "" ID: none.
	ConsoleClientID, ConsoleClientSecret, ConsoleRedirectURL string
}

// QuotaConfig holds the per-tenant quotas (shared/quota): live inbox streams per business
// unit and per recipient, and ingest events per second and burst per API key, each per
// instance.
type QuotaConfig struct {
	StreamsPerUnit, StreamsPerRecipient int
	IngestEventsPerSecond, IngestBurst  int
}

// isLoopbackHost reports a host name that only reaches this machine.
func isLoopbackHost(h string) bool { return h == "127.0.0.1" || h == "localhost" || h == "::1" }
