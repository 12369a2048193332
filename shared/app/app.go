package app

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"golang.org/x/time/rate"

	"github.com/automation-platform/automation/shared/api/apidoc"
	"github.com/automation-platform/automation/shared/api/attributeapi"
	"github.com/automation-platform/automation/shared/api/budgetapi"
	"github.com/automation-platform/automation/shared/api/campaignapi"
	"github.com/automation-platform/automation/shared/api/console"
	"github.com/automation-platform/automation/shared/api/deadletterapi"
	"github.com/automation-platform/automation/shared/api/deliveryapi"
	"github.com/automation-platform/automation/shared/api/deviceapi"
	"github.com/automation-platform/automation/shared/api/eventsapi"
	"github.com/automation-platform/automation/shared/api/inboxapi"
	"github.com/automation-platform/automation/shared/api/keysapi"
	"github.com/automation-platform/automation/shared/api/preferenceapi"
	"github.com/automation-platform/automation/shared/api/registryapi"
	"github.com/automation-platform/automation/shared/api/reportapi"
	"github.com/automation-platform/automation/shared/api/sessionsapi"
	"github.com/automation-platform/automation/shared/api/supportapi"
	"github.com/automation-platform/automation/shared/api/templateapi"
	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/azure"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaignbudget"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/handler"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/inbox"
	"github.com/automation-platform/automation/shared/local"
	"github.com/automation-platform/automation/shared/logctx"
	"github.com/automation-platform/automation/shared/metricscount"
	"github.com/automation-platform/automation/shared/oidcauth"
	"github.com/automation-platform/automation/shared/preference"
	"github.com/automation-platform/automation/shared/quota"
	"github.com/automation-platform/automation/shared/recipienttoken"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/report"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/session"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/support"
	"github.com/automation-platform/automation/shared/telemetry"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/shared/trace"
	"github.com/automation-platform/automation/shared/trace/localtrace"
	"github.com/automation-platform/automation/sql/mssql"
	"github.com/automation-platform/automation/sql/sqlite"
)

// Runtime is a wired pipeline.
type Runtime struct {
	marks     settledMarks // the settled messages' marks, gathered while the eager publisher runs
	Store     store.Store
	Trace     trace.Store
	Publisher bus.Publisher
	Memory    *bus.Memory // the in-process bus; nil when Service Bus is used
	Poller    *scheduler.Poller
	Relay     *delivery.Relay
	// Pump is the eager publisher (docs/performance.md#publish-on-the-commit-path): the
	// store's commit hook wakes it after every commit that wrote outbox rows; it runs only
	// once StartPublisher started it (serve and the custom handler do; the replay and the
	// tests drive the relay through Tick). Nil with AUTOMATION_EAGER_PUBLISH=false or a
	// store without the hook.
	Pump *delivery.Pump
	// EventLog samples the per-message log line of each message published on `events`
	// (embedded): its counters are the metric of what was published there.
	EventLog *logctx.Sampler
	// Backlog is ingest's backpressure gate (AUTOMATION_INGEST_MAX_BACKLOG).
	Backlog    *delivery.Backlog
	Dispatcher *delivery.Dispatcher
	Projector  *delivery.Projector
	Templates  *delivery.Templates
	// Preferences holds recipient preferences and quiet hours; it is the Dispatcher's Gate
	// (docs/channels.md#recipient-preferences).
	Preferences *preference.Service
	// DeliverySupport lists and resolves UNKNOWN deliveries (/api/support/deliveries/...).
	DeliverySupport *delivery.Support
	Reminders       *reminder.Service
	// Reports runs report subscriptions (docs/architecture.md#report-subscriptions); its HTTP routes are on Functions.
	Reports *report.Service
	// Admin manages business units and reminder settings (the settings API, replay's
	// setting inputs); Reconciler runs the bounded repair sweeps (Reconciliation).
	Admin      *reminder.Admin
	Reconciler *reminder.Reconciler
	Events     *events.Router
	Functions  *funchost.Router
	// Telemetry holds the OpenTelemetry providers Open set up from the OTEL_* settings
	// (docs/observability.md); zero when telemetry is off.
	Telemetry *telemetry.Providers
	// metricsToken guards GET /metrics (AUTOMATION_METRICS_TOKEN; "" = the API's guard).
	metricsToken string
	// apiScope is the business units the APIs serve at most (AUTOMATION_API_BUSINESS_UNITS):
	// a GET /metrics caller must see all of them.
	apiScope automation.Scope
	// API wraps HTTP route handlers (auth, business-unit scope, Idempotency-Key, problem
	// details); the HTTP functions register their routes on Functions with it.
	API *httpapi.API
	// DeadLetters lists, requeues and counts the messages a route gave up on
	// (/api/support/dead-letters, the dead-letter counts of /api/events/metrics).
	DeadLetters *deadletter.Service
	// Support is the support API's service (find, explain, act, metrics); its routes are
	// registered on Functions under /api/support/ (supportapi.Register).
	Support *support.Service
	// Gateway is the event gateway's ingest service (POST /api/events, domain-events);
	// Registry manages its registry (/api/event-registry, serve -registry, replay).
	Gateway  *gateway.Service
	Registry *gateway.Admin
	// Keys issues and checks API keys (docs/security.md#api-keys).
	Keys *apikey.Service
	// Quotas are the per-tenant quotas of the HTTP APIs (docs/security.md#quotas); set its
	// limits before serving.
	Quotas *quota.Quotas
	// Budget is the charging service of paid campaign actions and the budget, price-policy
	// and fee support routes (docs/budgets.md; budgetapi.Register).
	Budget *budget.Service
	// Inbox reads and streams the in-app inbox (docs/inbox.md); InboxBroker fans the
	// "inbox" channel's messages out to this instance's live streams. Its routes are
	// registered on Functions under /api/inbox/ (inboxapi.Register).
	Inbox       *inbox.Service
	InboxBroker *inbox.Broker
	// Attributes is the attribute engine (TrackingProcessor, docs/attributes.md);
	// AttributeFlusher folds hot counters' deltas on the OutboxRelay timer.
	Attributes       *attribute.Service
	AttributeFlusher *attribute.Flusher
	// AttributePurger deletes processed-event ids past the dedupe window
	// (AUTOMATION_ATTRIBUTE_DEDUPE_WINDOW_HOURS) on the OutboxRelay timer.
	AttributePurger *attribute.ProcessedPurger
	// MetricsSampler records the console's metrics history on the OutboxRelay timer
	// (docs/console.md#overview).
	MetricsSampler *support.Sampler
	// reportRuns counts report runs for the overview (the report handler's Runs), persisted
	// by MetricsSampler with the gateway's and the attribute engine's counts.
	reportRuns *metricscount.Counts
	// Campaigns manages campaigns and their manual-resolution queue (/api/campaigns,
	// docs/campaigns.md); the campaign functions run on Campaign (dispatcher, worker,
	// projection, the retention purge).
	Campaigns *campaign.Admin
	Campaign  handler.CampaignDeps
	Clock     automation.Clock
	// host delivers the in-process bus's messages to the Service Bus functions and fires
	// the timer functions, through Functions, as the Functions host would (the functions of
	// topology.Functions); nil on Service Bus.
	host    *local.Host
	closers []func() error
	// sbDeadLetters reads the Service Bus entities' dead-letter subqueues; nil on the
	// in-process bus.
	sbDeadLetters *azure.ServiceBusDeadLetters
	// keptDeadLetters is the in-process bus's dead-letter list kept across restarts in the
	// diagnostics store (deadletter.Kept); nil on Service Bus.
	keptDeadLetters *deadletter.Kept
}

// Options are what a runtime needs beyond Config.
type Options struct {
	Clock automation.Clock
	Log   *slog.Logger
	// Billing is the billing provider of paid campaign actions (docs/billing.md); nil: the
	// client of cfg.Billing.URL, else budget.NoBilling (priced commands are refused before
	// anything is held).
	Billing budget.Billing
	// WithoutBudgets runs the campaign worker without the budget in its seams: every action
	// is free. Only for replays of scenarios that declare no billing (written before budgets
	// existed) and tests of the campaign platform alone; a deployment never sets it.
	WithoutBudgets bool
	// Channels are the delivery channels by name; nil: Open builds them from the
	// configuration (ChannelsFromConfig: "log" to LogOutput, plus webhook/email when
	// configured).
	Channels map[string]delivery.Channel
	// LogOutput receives the "log" channel's lines when Channels is nil (default io.Discard).
	LogOutput io.Writer
	// Seed makes backoff jitter deterministic; 0 seeds from the clock.
	Seed uint64
	// DispatchInOrder sends the deliveries of a dispatch batch one at a time, in the order
	// their messages came (delivery.Dispatcher.InOrder): the replay simulator's
	// deterministic output. Off, a batch's sends overlap.
	DispatchInOrder bool
	// OnOutcome, when set, observes each dispatch outcome the dispatcher records (replay
	// writes its output lines from it). It is called on the dispatching goroutine.
	OnOutcome func(delivery.Outcome)
	// ReportSources are renderers of domain report types (report.HTTPSource) beside the
	// built-in automation-activity report; nil: Open builds them from
	// AUTOMATION_REPORT_SOURCES.
	ReportSources map[string]report.Renderer
	// ConsoleWithoutToken serves the console when no API token is configured (local serve on
	// 127.0.0.1, where the APIs are open too); otherwise such a console answers 503.
	ConsoleWithoutToken bool
	// ConsolePages are more console pages (console.Page), after the built-in ones.
	ConsolePages []console.Page
	// SkipMigrations: never migrate; check that the database's schema version is the one the
	// binary embeds and fail with a *sqlstore.SchemaError when it is not. The custom handler
	// (ServeHandler) sets it: its identity holds no DDL rights and `automation migrate` is a
	// deployment step. False (serve, replay, the embedded default): SQLite is migrated on open.
	SkipMigrations bool
	// OpenStore opens the store; nil means OpenStore (the package function). Tests inject a
	// slow or failing opener.
	OpenStore StoreOpener
	// OnRouted, when set, observes each gateway message the relay published (events,
	// tracking, noti and the source route): replay writes its "routed" lines from it.
	OnRouted func(gateway.Routed)
	// OnAttributes, when set, observes each tracking message the attribute engine applied
	// (its changes and triggers; replay prints them).
	OnAttributes func(attribute.Result)
	// OnAttributeRefused, when set, observes each tracking message refused with a
	// permanent error (dead-lettered, nothing written).
	OnAttributeRefused func(eventID string, err error)
	// RegistryReload is how often the ingest path checks the registry for a new version
	// (0: gateway.DefaultReloadInterval).
	RegistryReload time.Duration
	// CampaignProviders are action providers beside the delivery channels (every channel
	// serves the NOTIFICATION_* actions as a provider of its name), e.g. an
	// HTTPProvider for TOP_UP and ADD_DATA (docs/campaigns.md#providers).
	CampaignProviders map[string]CampaignProvider
	// OnCampaignAction, when set, observes each campaign command outcome the worker records;
	// CampaignSweepParallel bounds the commands one sweep runs at once (0: 16; replay: 1,
	// for a deterministic order).
	OnCampaignAction      func(store.CampaignCommand)
	CampaignSweepParallel int
	// Faults are the deterministic simulator's fault points (shared/sim, faults.go); nil in
	// production.
	Faults *Faults
}

// CampaignProvider is an action provider with its limits.
type CampaignProvider struct {
	Provider campaign.Provider
	Config   campaign.ProviderConfig
}

// StoreOpener opens the configured store; skipMigrations as in Options.SkipMigrations.
type StoreOpener func(ctx context.Context, cfg config.Config, skipMigrations bool) (store.Store, error)

// SQLitePath is the embedded store's file, DataDir/automation.db; it means nothing when
// cfg.UsesSQLServer(). The CLI names it, and refuses commands that only read or change
// existing rows when it does not exist yet (automation keys).
func SQLitePath(cfg config.Config) string { return filepath.Join(cfg.DataDir, "automation.db") }

// OpenStore opens SQL Server when AUTOMATION_SQLSERVER_DSN is set, else SQLite at
// DataDir/automation.db (creating DataDir). skipMigrations: check the schema version instead
// of migrating (*sqlstore.SchemaError on a mismatch). ctx bounds connecting and checking.
func OpenStore(ctx context.Context, cfg config.Config, skipMigrations bool) (store.Store, error) {
	if cfg.UsesSQLServer() {
		return mssql.Open(ctx, cfg.SQLServerDSN, &mssql.Options{SkipMigrations: skipMigrations})
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("app: data folder: %w", err)
	}
	return sqlite.Open(ctx, SQLitePath(cfg), &sqlite.Options{SkipMigrations: skipMigrations, GroupCommit: cfg.SQLiteGroupCommit})
}

// Open wires a runtime from cfg: SQL Server when AUTOMATION_SQLSERVER_DSN is set (else
// SQLite under DataDir; see OpenStore and Options.SkipMigrations), Service Bus when
// configured (else the in-process bus), Table/Blob trace when configured (else local trace
// under DataDir: DataDir/automation.db and DataDir/trace). It is the one composition root:
// the custom handler (ServeHandler), serve, replay and the benchmarks all open their
// runtime here. On the in-process bus, every message reaches its Service Bus function
// through the Functions router, as the Functions host would deliver it (the functions and
// destinations of topology.Functions), and Tick and DeliverEvent drive the same router.
func Open(ctx context.Context, cfg config.Config, o Options) (*Runtime, error) {
	if o.Clock == nil {
		return nil, errors.New("app: a Clock is required")
	}
	if o.Faults == nil {
		o.Faults = &Faults{} // no fault point: every hook nil, every path the production one
	}
	if o.Log != nil {
		o.Log = logctx.Logger(o.Log) // row, event and invocation context on every line
	} else {
		o.Log = slog.New(slog.DiscardHandler) // never slog.Default's stderr
	}
	r := &Runtime{Clock: o.Clock}
	fail := func(err error) (*Runtime, error) { _ = r.Close(); return nil, err }

	// OpenTelemetry first, so that everything wired below traces and counts from the start;
	// closed last, so that the spans of the close itself are exported.
	tel, err := telemetry.Setup(ctx, telemetryOptions(cfg.Telemetry))
	if err != nil {
		return fail(err)
	}
	r.Telemetry = tel
	r.metricsToken = cfg.Telemetry.MetricsToken
	r.closers = append(r.closers, func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return tel.Shutdown(sctx)
	})

	open := o.OpenStore
	if open == nil {
		open = OpenStore
	}
	st, err := open(ctx, cfg, o.SkipMigrations)
	if err != nil {
		return fail(err)
	}
	r.Store = st
	r.closers = append(r.closers, r.Store.Close)

	var cred azcore.TokenCredential
	if cfg.ServiceBusNamespace != "" || (cfg.StorageConnection == "" && cfg.UsesAzureStorage()) {
		c, err := azure.NewCredential(cfg.AzureClientID)
		if err != nil {
			return fail(err)
		}
		cred = c
	}
	if cfg.UsesAzureStorage() {
		ts, err := azure.NewTraceStore(ctx, azure.TraceOptions{ConnectionString: cfg.StorageConnection,
			TableServiceURL: cfg.StorageTableURL, BlobServiceURL: cfg.StorageBlobURL, Credential: cred})
		if err != nil {
			return fail(err)
		}
		r.Trace = ts
	} else {
		ts, err := localtrace.Open(filepath.Join(cfg.DataDir, "trace"))
		if err != nil {
			return fail(err)
		}
		r.Trace = ts
		r.closers = append(r.closers, ts.Close)
	}
	if cfg.UsesServiceBus() {
		p, err := azure.NewServiceBusPublisher(azure.ServiceBusOptions{ConnectionString: cfg.ServiceBusConnection, Namespace: cfg.ServiceBusNamespace, Credential: cred})
		if err != nil {
			return fail(err)
		}
		r.Publisher = p
		r.sbDeadLetters = &azure.ServiceBusDeadLetters{Publisher: p, Entities: deadLetterEntities()}
		r.closers = append(r.closers, func() error {
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return p.Close(cctx)
		})
	} else {
		// The in-process bus retries a failed message with growing delays (not ten times in a
		// millisecond) and records what it finally gives up on.
		r.Memory = bus.NewMemory(&bus.MemoryOptions{RetryDelay: time.Second, MaxRetryDelay: time.Minute,
			Now: o.Clock.Now, OnDeadLetter: r.recordDeadLetter(o.Log), OnSettled: r.settled(o.Log), AfterDrain: r.flushSettled(o.Log),
			DeadLetterLabel: func(m bus.Message) string { return deadletter.BusinessUnitOf(m.Body) }})
		r.Publisher = r.Memory
		// Its dead-letter list outlives a restart (docs/operations.md#dead-letters).
		r.keptDeadLetters = &deadletter.Kept{Memory: r.Memory, Blobs: r.Trace, Clock: o.Clock, Log: o.Log}
		if _, err := r.keptDeadLetters.Restore(ctx); err != nil {
			return fail(err)
		}
	}
	pc := scheduler.Config{BatchSize: cfg.DueWorkBatchSize, Concurrency: cfg.DueWorkConcurrency, Lease: cfg.Lease}
	if o.ReportSources == nil {
		o.ReportSources = map[string]report.Renderer{}
		for typ, u := range cfg.ReportSources {
			src, err := report.NewHTTPSource(u)
			if err != nil {
				return fail(fmt.Errorf("app: AUTOMATION_REPORT_SOURCES: %w", err))
			}
			o.ReportSources[typ] = src
		}
	}
	r.InboxBroker = inbox.NewBroker(inbox.DefaultMaxSubscribers, inbox.DefaultQueue)
	r.Inbox = &inbox.Service{Store: r.Store, Broker: r.InboxBroker, Clock: r.Clock}
	if o.Channels == nil {
		chs, err := ChannelsFromConfig(cfg, o.LogOutput, !cfg.UsesSQLServer(), o.Clock, r.Store)
		if err != nil {
			return fail(err)
		}
		// The in-app inbox is our own database: always there, embedded and in Azure.
		chs[inbox.ChannelName] = &inbox.Channel{Store: r.Store, Broker: r.InboxBroker}
		o.Channels = chs
	}
	// The product's own channels — the in-app inbox and the "event" channel into the
	// gateway — are there too when the caller's map leaves them out (the replay brings its
	// own log and webhook). The event channel's gateway is wired below.
	o.Channels = maps.Clone(o.Channels)
	if o.Channels[inbox.ChannelName] == nil {
		o.Channels[inbox.ChannelName] = &inbox.Channel{Store: r.Store, Broker: r.InboxBroker}
	}
	if o.Channels[gateway.EventChannelName] == nil {
		o.Channels[gateway.EventChannelName] = &gateway.EventChannel{Ingest: func(ctx context.Context, scope automation.Scope, raws []events.Raw) ([]gateway.Result, error) {
			return r.Gateway.Ingest(ctx, scope, raws)
		}}
	}
	if err := LimitChannels(o.Channels, cfg.ChannelLimits, r.Clock); err != nil {
		return fail(err)
	}
	if o.CampaignProviders, err = CampaignProvidersFromConfig(cfg, o.CampaignProviders); err != nil {
		return fail(err)
	}
	if err := r.wire(pc, o); err != nil {
		return fail(err)
	}
	r.AttributePurger.Window = cfg.AttributeDedupeWindow
	r.wireThroughput(cfg, o.Log)
	mode := handler.Inline
	if cfg.DueWorkMode == config.ModeFanout {
		mode = handler.Fanout
	}
	scope := automation.ParseScope(cfg.APIBusinessUnits)
	r.apiScope = scope
	// Credentials (docs/security.md#credentials): with AUTOMATION_API_TOKEN set, every /api
	// request needs a bearer credential: that token (the bootstrap admin) or an API key.
	// Without it the APIs take none (local serve without -token; tests).
	r.Keys = &apikey.Service{Store: r.Store, Clock: r.Clock, Throttle: httpapi.NewThrottle(r.Clock)}
	var authn httpapi.Authenticator
	if cfg.APIToken != "" {
		authn = r.Keys
	}
	var recipients *recipienttoken.Verifier
	if cfg.RecipientTokenKeys != "" {
		ks, err := recipienttoken.ParseKeys(cfg.RecipientTokenKeys)
		if err != nil {
			return fail(err)
		}
		recipients = &recipienttoken.Verifier{Keys: ks, Clock: r.Clock}
	}
	// How identity-provider claims map to roles and units (docs/security.md#openid-connect):
	// for bearer tokens, console sign-ins, and every request of a person's console session.
	groups, err := oidcauth.ParseGroups(cfg.OIDC.Groups)
	if err != nil {
		return fail(err)
	}
	mapping := oidcauth.Mapping{RoleClaim: cfg.OIDC.RoleClaim, UnitsClaim: cfg.OIDC.UnitsClaim, GroupsClaim: cfg.OIDC.GroupsClaim, Groups: groups}
	var tokens httpapi.Authenticator
	if cfg.OIDC.Issuer != "" {
		// JWT bearer tokens of the issuer (docs/security.md#openid-connect); API keys are told
		// apart by their shape. The discovery document is fetched now: an unreachable issuer
		// fails the open, which the custom handler retries.
		v, err := oidcauth.New(ctx, oidcauth.Config{Issuer: cfg.OIDC.Issuer, Audience: cfg.OIDC.Audience,
			RoleClaim: cfg.OIDC.RoleClaim, UnitsClaim: cfg.OIDC.UnitsClaim, GroupsClaim: mapping.GroupsClaim, Groups: mapping.Groups,
			Clock: r.Clock, Log: o.Log})
		if err != nil {
			return fail(err)
		}
		tokens = v
	}
	var consoleSignIn console.OIDCSignIn
	if cfg.OIDC.ConsoleClientID != "" {
		// The console's own client: people sign in with the authorization-code flow and PKCE
		// (docs/console.md#sign-in), mapped through the same role and units claims.
		l, err := oidcauth.NewLogin(ctx, oidcauth.LoginConfig{Issuer: cfg.OIDC.Issuer, ClientID: cfg.OIDC.ConsoleClientID,
			ClientSecret: cfg.OIDC.ConsoleClientSecret, RedirectURL: cfg.OIDC.ConsoleRedirectURL,
			RoleClaim: cfg.OIDC.RoleClaim, UnitsClaim: cfg.OIDC.UnitsClaim, GroupsClaim: mapping.GroupsClaim, Groups: mapping.Groups,
			Clock: r.Clock, Log: o.Log})
		if err != nil {
			return fail(err)
		}
		consoleSignIn = l
	}
	if authn != nil && (tokens != nil || recipients != nil) {
		authn = credentials{keys: r.Keys, recipients: recipients, tokens: tokens}
	}
	// Per-tenant quotas under the global caps (docs/security.md#quotas).
	// The ingest route charges its decoded events (eventsapi.Deps.Charge); the local events
	// route carries one event per request.
	r.Quotas = &quota.Quotas{Clock: r.Clock, StreamPattern: "GET " + inboxapi.PathStream, IngestPatterns: []string{LocalEventsPath},
		StreamsPerUnit: cfg.Quotas.StreamsPerUnit, StreamsPerRecipient: cfg.Quotas.StreamsPerRecipient,
		IngestPerSecond: rate.Limit(cfg.Quotas.IngestEventsPerSecond), IngestBurst: cfg.Quotas.IngestBurst}
	r.API = httpapi.New(httpapi.Options{Token: cfg.APIToken, Authenticator: authn, BusinessUnits: &scope, RouteRoles: routeRoles,
		RecipientRoutes: recipientRoutes, QueryCredentialRoutes: queryCredentialRoutes,
		Admit: r.Quotas.Admit, Idempotency: r.Store, Clock: r.Clock, Logger: o.Log})
	// Forwarded HTTP bodies are bounded by the largest route's (the ingest route's batches);
	// every API bounds its own routes below it (httpapi.Options.MaxBodyBytes, 1 MiB by
	// default). Invocation bodies keep the router's default.
	r.MetricsSampler = &support.Sampler{} // its Service is set below, before anything runs
	r.Functions = funchost.NewRouter(&funchost.RouterOptions{Logger: o.Log, MaxForwardedBodyBytes: eventsapi.MaxBodyBytes})
	handler.Register(r.Functions, handler.Deps{Store: r.Store, Events: r.Events, Gateway: r.Gateway,
		Noti: &gateway.NotiDelivery{Store: r.Store, Clock: r.Clock}, Attributes: r.Attributes, AttributeFlusher: r.AttributeFlusher, AttributePurger: r.AttributePurger, Poller: r.Poller, Relay: r.Relay,
		Dispatcher: r.Dispatcher, Projector: r.Projector, Publisher: r.Publisher, Trace: r.Trace, Clock: r.Clock, Mode: mode,
		RelayAfterPoll: cfg.RelayAfterPoll, RelayBudget: cfg.RelayBudget, DrainBatches: cfg.DueWorkDrainBatches, BatchDeadline: cfg.BatchDeadline, Log: o.Log, Campaigns: &r.Campaign,
		SampleMetrics: func(ctx context.Context) (any, error) { return r.MetricsSampler.RunOnce(ctx) },
		OnDeadLetter:  r.keepDeadLetter})
	sup, err := support.New(r.Store, r.Trace, r.Clock, support.Config{MaxReleasePerMinute: cfg.SupportMaxReleasePerMinute,
		DefaultReleasePerMinute: min(60, cfg.SupportMaxReleasePerMinute)}, o.Log)
	if err != nil {
		return fail(err)
	}
	r.Support = sup
	r.MetricsSampler.Service = sup
	// The gateway's ingest counts are persisted by the sampler (MetricsCount), and once more
	// on Close, so a restart loses none of them (docs/console.md#overview).
	r.MetricsSampler.Counters = []support.CountSource{r.Gateway.Metrics, r.Attributes.Triggers, r.reportRuns}
	r.closers = append(r.closers, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := r.MetricsSampler.FlushCounts(ctx)
		return err
	})
	if err := r.registerLevels(); err != nil {
		return fail(err)
	}
	// Support routes (/api/support/...) belong to the SupportApi HTTP function in Azure.
	supportapi.Register(r.Functions, r.API, r.Support)
	deliveryapi.Register(r.Functions, r.API, r.DeliverySupport)
	// Dead letters of every route (/api/support/dead-letters): the in-process bus's list, or
	// Service Bus's dead-letter subqueues (docs/operations.md#dead-letters).
	r.DeadLetters = &deadletter.Service{Box: r.deadLetterBox(), Log: o.Log, Audit: r.Store, Clock: r.Clock}
	deadletterapi.Register(r.Functions, r.API, r.DeadLetters)
	reportapi.Register(r.Functions, r.API, r.Reports)
	// The charging service of paid campaign actions (docs/budgets.md).
	switch {
	case o.Billing != nil:
	case cfg.Billing.URL != "":
		// With telemetry on, each billing call is an HTTP client span (a child of budget.charge)
		// and carries its traceparent; off, the transport is http.DefaultTransport as it is.
		o.Billing = &billing.Client{BaseURL: cfg.Billing.URL, Token: cfg.Billing.Token, Timeout: cfg.Billing.Timeout,
			HTTP: &http.Client{Transport: r.Telemetry.HTTPTransport(nil)}}
	default:
		o.Billing = budget.NoBilling{}
	}
	r.Budget = &budget.Service{Store: r.Store, Billing: o.Billing, Clock: r.Clock, Log: o.Log, KnownActionType: r.Campaigns.Catalog.Known, Campaigns: r.Store,
		Hooks: o.Faults.Budget}
	// The browser console (/api/console/..., the Console HTTP function; docs/console.md).
	// Its sessions are kept server-side (shared/session, docs/security.md#sessions): the
	// console registers on a router of its own, and every route reaches it through the guard.
	consoleRouter := funchost.NewRouter(&funchost.RouterOptions{Logger: o.Log})
	cons := console.Register(consoleRouter, r.API, console.Deps{Support: r.Support, Deliveries: r.DeliverySupport, Reports: r.Reports, Units: r.Store},
		console.Options{WithoutToken: o.ConsoleWithoutToken, Logger: o.Log, Pages: append(consolePages(r), o.ConsolePages...),
			OIDC: consoleSignIn, RoleOf: RouteRole})
	// Failed sign-ins of the token form and of the OIDC callback (a forged or replayed
	// state, a refused code or token, an error from the provider) count against the same
	// per-address throttle.
	guard := &session.Guard{Store: r.Store, Clock: r.Clock, Log: o.Log, CookieName: console.CookieName,
		SignInPatterns: []string{"POST " + console.Base + "/login", "GET " + console.Base + "/oidc/callback"},
		LogoutPattern:  "POST " + console.Base + "/logout",
		Principal:      httpapi.BootstrapName, PrincipalOf: cons.SessionPrincipal, Idle: session.DefaultIdle, Absolute: console.DefaultSessionLifetime,
		Resolve: consoleSessionResolver(r.Keys, mapping, consoleSignIn != nil), SignIns: httpapi.NewThrottle(r.Clock),
		// X-Forwarded-For names the throttled address only from a configured proxy
		// (AUTOMATION_TRUSTED_PROXIES; the Functions host in Azure, none locally).
		TrustedProxies: cfg.TrustedProxies}
	for _, p := range consoleRouter.HTTPPatterns() {
		r.Functions.RegisterHTTP(p, guard.Wrap(p, consoleRouter))
	}
	// The ingest route takes batches of up to 500 events: its own body bound, the same rules.
	eventsAPI := httpapi.New(httpapi.Options{Token: cfg.APIToken, Authenticator: authn, BusinessUnits: &scope, RouteRoles: routeRoles,
		Admit: r.Quotas.Admit, Idempotency: r.Store, Clock: r.Clock,
		Logger: o.Log, MaxBodyBytes: eventsapi.MaxBodyBytes})
	eventsapi.Register(r.Functions, eventsAPI, eventsapi.Deps{Service: r.Gateway, Store: r.Store, Backlog: r.Backlog, DeadLetters: r.DeadLetters,
		Charge: r.Quotas.ChargeIngest})
	registryapi.Register(r.Functions, r.API, r.Registry)
	// API keys (/api/keys/..., the ApiKeysApi function): no Idempotency store, so a created
	// key is never stored in a replayable response.
	keysapi.Register(r.Functions, httpapi.New(httpapi.Options{Token: cfg.APIToken, Authenticator: authn, BusinessUnits: &scope,
		RouteRoles: routeRoles, Clock: r.Clock, Logger: o.Log}), r.Keys)
	// Ending a principal's console sessions (/api/console-sessions/..., the
	// ConsoleSessionsApi function): no Idempotency store, ending is idempotent by nature.
	sessionsapi.Register(r.Functions, httpapi.New(httpapi.Options{Token: cfg.APIToken, Authenticator: authn, BusinessUnits: &scope,
		RouteRoles: routeRoles, Clock: r.Clock, Logger: o.Log}), &session.Admin{Store: r.Store, Clock: r.Clock})
	// Attribute reads (/api/attributes/...) belong to the AttributesApi HTTP function in Azure.
	attributeapi.Register(r.Functions, r.API, attributeapi.Deps{Store: r.Store, Clock: r.Clock, EntityTypes: r.entityTypes})
	// Template routes (/api/templates/...) belong to the TemplatesApi HTTP function in Azure.
	templateapi.Register(r.Functions, r.API, templateapi.Deps{Templates: r.Templates, Store: r.Store, Units: r.Store,
		TestSender: &delivery.TestSender{Store: r.Store, Templates: r.Templates, Channels: r.Dispatcher.Channels, Clock: r.Clock}})
	// Device registry routes (/api/devices/...) belong to the DevicesApi HTTP function in Azure.
	deviceapi.Register(r.Functions, r.API, deviceapi.Deps{Store: r.Store, Units: r.Store, Clock: r.Clock})
	// Recipient preferences and quiet hours (docs/channels.md#recipient-preferences): the
	// dispatcher's gate, and their routes (/api/preferences/..., the PreferencesApi function;
	// /api/unsubscribe, the anonymous Unsubscribe function).
	categories := preference.DefaultRegistry()
	if cfg.Preferences.Categories != "" {
		c, err := preference.ParseRegistry([]byte(cfg.Preferences.Categories))
		if err != nil {
			return fail(fmt.Errorf("AUTOMATION_NOTIFICATION_CATEGORIES: %w", err))
		}
		categories = c
	}
	r.Preferences = &preference.Service{Store: r.Store, Registry: categories, Clock: r.Clock,
		UnsubscribeURL: cfg.Preferences.UnsubscribeURL, UnsubscribeSecret: []byte(cfg.Preferences.UnsubscribeSecret)}
	r.Dispatcher.Gate = r.Preferences
	// The same gate holds the campaign NOTIFICATION_* actions, which call their channel
	// directly (campaign.Worker.Gate: asked before the fee guard, so a skip is never charged).
	r.Campaign.Worker.Gate = r.Preferences
	// The inbound SMS webhook (ACS through Event Grid) is ingest too: its events count
	// against the quota of the API key its event subscription sends (docs/security.md#quotas).
	preferenceapi.Register(r.Functions, r.API, preferenceapi.Deps{Service: r.Preferences, Units: r.Store, Charge: r.Quotas.ChargeIngest})
	// Inbox routes (/api/inbox/...) belong to the InboxApi HTTP function in Azure.
	inboxapi.Register(r.Functions, r.API, r.Inbox, inboxapi.Options{Units: r.Store})
	// Campaign routes (/api/campaigns/...) belong to the CampaignsApi HTTP function in Azure.
	campaignapi.Register(r.Functions, r.API, r.Campaigns)
	// Budget routes (/api/budgets/...) belong to the BudgetApi HTTP function in Azure.
	budgetapi.Register(r.Functions, r.API, r.Budget)
	// The product's one OpenAPI document, every API's bundled (GET /api/openapi.json, the
	// OpenApi function in Azure; docs/api-conventions.md#one-document-for-the-product).
	if err := apidoc.Register(r.Functions, r.API); err != nil {
		return fail(err)
	}
	// The budget in the campaign worker's seams (docs/budgets.md#in-the-worker), its fee
	// projection and the reconciliation of in-doubt fees on the sweep.
	if !o.WithoutBudgets {
		guard := &campaignbudget.Guard{Budget: r.Budget, Campaigns: r.Store, Clock: r.Clock, Log: o.Log}
		r.Campaign.Worker.Guard, r.Campaign.Worker.AfterResult = guard, guard.AfterResult
	}
	r.Campaign.Fees, r.Campaign.Budget = &budget.FeeProjector{Store: r.Store, Clock: r.Clock}, r.Budget
	r.Campaign.Trace, r.Campaign.Log = r.Trace, o.Log
	handler.RegisterCampaigns(r.Functions, r.Campaign)
	r.wireLifecycle(cfg, o.Log)
	if r.Memory != nil {
		var fs []topology.Function // HTTP functions are routes on Functions, nothing to run
		for _, f := range topology.Functions() {
			if f.Trigger != topology.HTTPTrigger {
				fs = append(fs, f)
			}
		}
		h, err := local.NewHost(r.Functions, r.Memory, local.Definitions(fs), cfg.Lookup, r.Clock, o.Log)
		if err != nil {
			return fail(err)
		}
		r.host = h
	}
	return r, nil
}

// consoleTestSend is the templates page's test send (docs/console.md#templates): the
// templates API's delivery.TestSender, so the console refuses and queues exactly as
// POST /api/templates/{key}/test-send does (docs/channels.md#test-send). The answer names the
// queued delivery.
func consoleTestSend(r *Runtime) console.TemplateTestSend {
	ts := &delivery.TestSender{Store: r.Store, Templates: r.Templates, Channels: r.Dispatcher.Channels, Clock: r.Clock}
	return func(ctx context.Context, businessUnitID, key, channel, recipient, payloadJSON, operator string) (string, error) {
		res, err := ts.Send(ctx, delivery.TestSendRequest{BusinessUnitID: businessUnitID, Template: key, Channel: channel,
			Recipient: recipient, Payload: json.RawMessage(payloadJSON), Operator: operator})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("queued delivery %s (version %d, scheduler key %s)", res.DeliveryKey, res.TemplateVersion, res.SchedulerKey), nil
	}
}

// consolePages are the console pages of the services beside support (docs/console.md#pages):
// gateway, registry, attributes, campaigns, budgets and the UNKNOWN fee queue.
func consolePages(r *Runtime) []console.Page {
	var ps []console.Page
	for _, p := range [][]console.Page{console.GatewayPages(r.Registry, r.Gateway), console.AttributePages(r.Store, r.Clock),
		console.CampaignPages(r.Campaigns, r.Budget, r.Store), console.BudgetPages(r.Budget), console.FeePages(r.Budget), console.DeadLetterPages(r.DeadLetters),
		console.ActivityPages(r.Store, r.Clock), console.TemplatePages(r.Templates, r.Store, console.TemplateOptions{TestSend: consoleTestSend(r)})} {
		ps = append(ps, p...)
	}
	return ps
}

// Migrate applies the migrations of the configured store (SQL Server when
// AUTOMATION_SQLSERVER_DSN is set, else SQLite under DataDir): opening a store migrates it.
func Migrate(ctx context.Context, cfg config.Config) error {
	st, err := OpenStore(ctx, cfg, false)
	if err != nil {
		return err
	}
	return st.Close()
}

// wire builds the services on the chosen store, trace and publisher.
func (r *Runtime) wire(pc scheduler.Config, o Options) error {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	seed := o.Seed
	if seed == 0 {
		seed = uint64(r.Clock.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	if pc.Backoff.Rand == nil {
		pc.Backoff.Rand = rng.Float64
	}
	channels := o.Channels
	if channels == nil {
		out := o.LogOutput
		if out == nil {
			out = io.Discard
		}
		channels = map[string]delivery.Channel{"log": &delivery.LogChannel{W: out}}
	}
	names := map[string]bool{}
	for n := range channels {
		names[n] = true
	}
	renderers := report.NewRegistry()
	renderers.Register(report.ActivityReportType, &report.ActivityRenderer{Store: r.Store})
	for t, rr := range o.ReportSources {
		renderers.Register(t, rr)
	}
	reports, err := report.New(report.Config{Store: r.Store, Blobs: r.Trace, Renderers: renderers, Channels: names,
		RecipientCheck: func(ch, rcp string) error {
			if c := channels[ch]; c != nil {
				return c.ValidateRecipient(rcp)
			}
			return nil
		},
		CanAttach: func(ch string) bool { c := channels[ch]; return c != nil && c.Traits().Attachments },
		Clock:     r.Clock, Trace: r.Trace, Log: log})
	if err != nil {
		return err
	}
	r.Reports = reports
	reg := scheduler.NewRegistry()
	reg.Register(automation.TypeReminder, &reminder.Handler{Store: r.Store})
	r.reportRuns = metricscount.New(metricscount.FlowReport)
	reg.Register(automation.TypeReportSubscription, &report.Handler{Service: reports, Runs: r.reportRuns})
	pc.Hooks = o.Faults.Scheduler
	poller, err := scheduler.NewPoller(pc, r.Store, reg, r.Clock, r.Trace, log)
	if err != nil {
		return err
	}
	r.Poller = poller
	// The last batch's trace rows may still be in flight (Poller.RunOnce): written before the
	// trace store closes, within closeFlushTimeout.
	r.closers = append(r.closers, flushCloser(poller, closeFlushTimeout, log))
	r.EventLog = &logctx.Sampler{Now: r.Clock.Now}
	r.Relay = &delivery.Relay{Store: r.Store, Publisher: o.Faults.publisher(routedObserver{next: r.Publisher, on: o.OnRouted, log: log, embedded: r.Memory != nil, sample: r.EventLog}),
		Clock: r.Clock, Log: log, Hooks: o.Faults.Relay, MarkOnSettle: r.Memory != nil, MarksGathered: r.marks.gathering}
	if r.Memory != nil {
		// Marks of messages the bus settled since its last drain: written before the store
		// closes (otherwise their rows are published again after their leases expire).
		relay := r.Relay
		r.closers = append(r.closers, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), closeFlushTimeout)
			defer cancel()
			return relay.FlushSettled(ctx)
		})
	}
	r.Templates = &delivery.Templates{Store: r.Store, Clock: r.Clock}
	r.Dispatcher = &delivery.Dispatcher{Store: r.Store, Templates: r.Templates, Blobs: r.Trace, Channels: channels, Clock: r.Clock, Log: log,
		Backoff: scheduler.Backoff{Steps: scheduler.DefaultBackoff, JitterFraction: 0.10, Rand: rng.Float64}, OnOutcome: o.OnOutcome,
		Hooks: o.Faults.Dispatch, InOrder: o.DispatchInOrder}
	r.Projector = &delivery.Projector{Store: r.Store, Clock: r.Clock}
	r.DeliverySupport = &delivery.Support{Store: r.Store, Clock: r.Clock, Log: log, Units: r.Store}
	r.Reminders = &reminder.Service{Store: r.Store, Clock: r.Clock, Channels: names, Log: log}
	r.Admin = &reminder.Admin{Store: r.Store, Clock: r.Clock, Service: r.Reminders, Channels: names, Log: log,
		TemplateWarning: templateWarning(r.Templates, channels)}
	r.Reconciler = &reminder.Reconciler{Service: r.Reminders, Log: log}
	r.Events = events.NewRouter()
	r.Events.RegisterAll(r.Reminders)
	checker := gateway.Checker{Channels: names}
	cache := &gateway.Cache{Store: r.Store, Checker: checker, Clock: r.Clock, Interval: o.RegistryReload, Log: log}
	r.Gateway = &gateway.Service{Store: r.Store, Registry: cache, Clock: r.Clock, Metrics: gateway.NewMetrics(), Log: log}
	r.Registry = &gateway.Admin{Store: r.Store, Checker: checker, Cache: cache, Clock: r.Clock}
	r.Attributes = &attribute.Service{Store: r.Store, Clock: r.Clock, OnApplied: o.OnAttributes, OnRefused: o.OnAttributeRefused,
		Hooks: o.Faults.Attribute, Triggers: metricscount.New(metricscount.FlowTrigger)}
	r.AttributeFlusher = &attribute.Flusher{Store: r.Store, Clock: r.Clock}
	r.AttributePurger = &attribute.ProcessedPurger{Store: r.Store, Clock: r.Clock}
	if err := r.wireCampaigns(o, channels, rng.Float64, log); err != nil {
		return err
	}
	return nil
}

// routedObserver tells OnRouted about each gateway message the relay published. Embedded
// (one process on the in-process bus), it also logs each message on `events` at INFO with
// its fat payload: the rule/points engine, that topic's main consumer, belongs to another
// team and does not run here, so the log shows what it would receive (the campaign
// dispatcher consumes the topic in process too).
type routedObserver struct {
	next     bus.Publisher
	on       func(gateway.Routed)
	log      *slog.Logger
	embedded bool
	sample   *logctx.Sampler
}

func (p routedObserver) Publish(ctx context.Context, m bus.Message) error {
	if err := p.next.Publish(ctx, m); err != nil {
		return err
	}
	if p.embedded && p.log != nil && m.Destination == topology.EventsTopic {
		// Sampled: a few lines a second at INFO, the rest at DEBUG, all counted
		// (Runtime.EventLog), so a production rate is not a log flood.
		p.log.Log(ctx, p.sample.Level(), "event published for the rule/points engine", "destination", m.Destination, "messageId", m.ID,
			"sessionId", m.SessionID, "payload", string(m.Body))
	}
	if p.on == nil {
		return nil
	}
	switch m.Destination {
	case topology.EventsTopic, topology.TrackingTopic, topology.NotiTopic, topology.DomainEventsTopic:
		// MessageId "{events.Identity(source, id)}:{route}" (a trigger's "{triggerId}:events"):
		// the event id the observer reports is the body's (a fat payload's or a trigger's
		// event_id, a CloudEvent's id).
		i := strings.LastIndex(m.ID, ":")
		if i < 0 || m.Destination == topology.DomainEventsTopic && m.ID[i+1:] != gateway.RouteSource {
			return nil
		}
		var b struct {
			EventID string `json:"event_id"`
			ID      string `json:"id"`
		}
		_ = json.Unmarshal(m.Body, &b)
		id := cmp.Or(b.EventID, b.ID, m.ID[:i]) // the first that is set
		p.on(gateway.Routed{Topic: m.Destination, EventID: id, SessionID: m.SessionID})
	}
	return nil
}

// settled tells the outbox relay that the in-process bus settled a message, so its row is
// marked published only now (delivery.Relay.MarkOnSettle): a message the bus still held at
// a crash is published again from its row, where Service Bus would have kept it; and the
// kept dead-letter list that a requeued dead letter's message was delivered
// (deadletter.Kept.Settled).
func (r *Runtime) settled(log *slog.Logger) func(context.Context, bus.Message) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context, m bus.Message) {
		if r.keptDeadLetters != nil {
			r.keptDeadLetters.Settled(ctx, m) // a requeued dead letter's message delivered
		}
		if r.Relay == nil {
			return
		}
		if err := r.Relay.Settled(ctx, m.ID); err != nil {
			log.Warn("outbox rows not marked after settlement; retried", "messageId", m.ID, "error", err)
		}
	}
}

// flushSettled marks the rows of the messages the in-process bus settled during a drain,
// in one transaction (delivery.Relay.FlushSettled), after the drain, or, while the eager
// publisher runs, within settledMarkDelay together with later drains' (settledMarks); a
// failed mark is retried at the next flush or relay run.
func (r *Runtime) flushSettled(log *slog.Logger) func(context.Context) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r.marks.flush = r.markSettled(log)
	return func(ctx context.Context) {
		if r.Relay == nil {
			return
		}
		if !r.marks.deferFlush() { // gathered while the eager publisher runs (settledMarks)
			r.marks.flush(ctx)
		}
		if r.Pump != nil && r.Relay.BusFull() {
			// The eager publisher stopped at a full bus: the consumers made room.
			r.Pump.Notify()
		}
	}
}

// deadLetterBox is the bus's dead letters: the in-process bus's list, or the Service Bus
// publisher's view of each entity's dead-letter subqueue; nil when the bus offers none.
func (r *Runtime) deadLetterBox() bus.DeadLetterBox {
	if r.keptDeadLetters != nil {
		return r.keptDeadLetters
	}
	if r.sbDeadLetters != nil {
		return r.sbDeadLetters
	}
	return nil
}

// deadLetterEntities are the Service Bus entities the functions consume (topology.Functions),
// each once: their dead-letter subqueues are the dead letters on Service Bus.
func deadLetterEntities() []azure.DeadLetterEntity {
	var out []azure.DeadLetterEntity
	seen := map[azure.DeadLetterEntity]bool{}
	for _, f := range topology.Functions() {
		var e azure.DeadLetterEntity
		switch {
		case f.Queue != "":
			e.Queue = f.Queue
		case f.Topic != "" && f.Subscription != "":
			e.Topic, e.Subscription = f.Topic, f.Subscription
		default:
			continue
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// keepDeadLetter puts a message its function recorded as a dead letter (and completed) on
// the in-process bus's dead-letter list, kept across restarts (deadletter.Kept.Record), so
// the dead-letter API lists and requeues it; on Service Bus the record (a diagnostics blob
// and a trace row) is all there is.
func (r *Runtime) keepDeadLetter(ctx context.Context, function string, msg funchost.ServiceBusMessage, reason error) {
	if r.Memory == nil {
		return
	}
	f, ok := topology.Lookup(function)
	if !ok || f.Destination() == "" {
		return
	}
	d := r.Memory.RecordDeadLetter(bus.Message{ID: msg.MessageID, Destination: f.Destination(), SessionID: msg.SessionID,
		Body: msg.Body, DeliveryCount: msg.DeliveryCount}, reason.Error())
	if r.keptDeadLetters != nil {
		_, _ = r.keptDeadLetters.Record(ctx, d) // a failure is logged; the dead letter stays listed
	}
}

// recordDeadLetter keeps a message the in-process bus gave up on: a diagnostics blob
// "deadletter/bus/{destination}/{id}.json" and the list's index (deadletter.Kept.Record),
// and an error log line.
func (r *Runtime) recordDeadLetter(log *slog.Logger) func(bus.DeadLettered) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(d bus.DeadLettered) {
		name := deadletter.RecordBlobName(d.Message.Destination, d.Message.ID)
		if r.keptDeadLetters != nil {
			_, _ = r.keptDeadLetters.Record(context.Background(), bus.DeadLetter{ID: d.ID, Message: d.Message, Reason: d.Reason,
				DeadLetteredOn: d.DeadLetteredOn}) // a failure is logged; the dead letter stays listed
		}
		log.Error("message dead-lettered by the in-process bus", "destination", d.Message.Destination, "messageId", d.Message.ID,
			"deliveryCount", d.Message.DeliveryCount, "error", d.Reason, "blob", name)
	}
}

// MaxRedispatch bounds how many dispatch messages RedispatchUnsent puts on the in-process
// bus at start-up; the dispatch sweep (QueuedGrace) starts any others later.
const MaxRedispatch = 10 * store.MaxBatch

// RedispatchUnsent puts a dispatch message on the in-process bus for the oldest
// NotificationJobs not yet Sent or Failed, at most MaxRedispatch. The in-process bus forgets
// its messages when the process stops; the jobs (in SQL) do not, so a restart re-dispatches
// them and the send claim keeps each to one send; the dispatch sweep starts whatever is
// beyond the bound. It returns how many were re-dispatched. No-op on Service Bus (durable).
func (r *Runtime) RedispatchUnsent(ctx context.Context) (int, error) {
	if r.Memory == nil {
		return 0, nil
	}
	n := 0
	var after int64
	for n < MaxRedispatch {
		jobs, err := r.Store.NotificationListUnsent(ctx, after, min(store.MaxBatch, MaxRedispatch-n))
		if err != nil {
			return n, err
		}
		for _, j := range jobs {
			body, _ := json.Marshal(delivery.DispatchMessage{DeliveryKey: j.DeliveryKey})
			if err := r.Memory.Publish(ctx, bus.Message{ID: j.DeliveryKey, Destination: topology.NotificationDispatchQueue, Body: body}); err != nil {
				return n, err
			}
			n++
			after = j.ID
		}
		if len(jobs) < store.MaxBatch {
			return n, nil
		}
	}
	return n, nil
}

// closeFlushTimeout bounds how long Close waits for the poller's last trace write (a hung
// trace store must not hang Ctrl-C on serve); the write itself is bounded by
// scheduler.DefaultTraceTimeout.
const closeFlushTimeout = 10 * time.Second

// flushCloser is the closer that waits, at most timeout (wall-clock), for p's trace write in
// flight. When the wait runs out it logs a warning (the batch's trace rows may be lost; its
// outcomes are committed) and returns nil: a shutdown goes on.
func flushCloser(p *scheduler.Poller, timeout time.Duration, log *slog.Logger) func() error {
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := p.Flush(ctx); err != nil {
			log.Warn("close: gave up waiting for the last trace write; that batch's trace rows may be lost (its outcomes are committed)",
				"waited", timeout.String(), "step", "trace", "error", err)
		}
		return nil
	}
}

// Close releases everything Open created, in reverse order.
func (r *Runtime) Close() error {
	var errs []error
	for i := len(r.closers) - 1; i >= 0; i-- {
		errs = append(errs, r.closers[i]())
	}
	r.closers = nil
	return errors.Join(errs...)
}

// TickResult counts one pass of the pipeline.
type TickResult struct {
	scheduler.Result
	Published  int
	Dispatched int // bus messages delivered to their functions (dispatch, facts, fan-out)
	Swept      int // jobs the dispatcher's sweep claimed (retries, lookups, expired claims)
}

// maxRelayRounds bounds the OutboxRelay invocations of one tick; maxTickBatches the
// DueWorkPoller invocations.
const (
	maxRelayRounds = 10_000
	maxTickBatches = 10_000
)

// Tick is one step of a simulated Functions host at the clock's now, on the in-process bus:
// it fires the DueWorkPoller timer function through the router until a poll claims nothing
// (a burst larger than one batch does not wait a tick per batch and risk TooLate), then the
// OutboxRelay timer function (relay, then the dispatch sweep) until it neither publishes nor
// sweeps anything, and after each invocation delivers what the bus holds to its function
// (DueWorkExecutor in fan-out mode, NotificationDispatch, DeliveryFactProjection) through
// the router, with the host's invocation payloads. It is the replay simulator's step.
// Errors: a function that answers non-2xx (the host would retry it), a context error.
func (r *Runtime) Tick(ctx context.Context) (TickResult, error) {
	var tr TickResult
	if r.host == nil {
		return tr, fmt.Errorf("app: Tick needs the in-process bus")
	}
	for i := 0; i < maxTickBatches; i++ {
		var res scheduler.Result // inline: the poll's Result; fan-out: rescued and claimed
		if err := r.fire(ctx, topology.DueWorkPoller, &res); err != nil {
			return tr, err
		}
		tr.Result.Add(res)
		d, err := r.Memory.Drain(ctx, 0)
		tr.Dispatched += d
		if err != nil {
			return tr, err
		}
		if res.Claimed == 0 {
			break
		}
	}
	for i := 0; i < maxRelayRounds; i++ {
		var rel struct {
			Published int                  `json:"published"`
			Sweep     delivery.SweepResult `json:"sweep"`
			Campaigns struct {
				Claimed int `json:"claimed"`
			} `json:"campaigns"`
		}
		if err := r.fire(ctx, topology.OutboxRelay, &rel); err != nil {
			return tr, err
		}
		tr.Published += rel.Published
		tr.Swept += rel.Sweep.Claimed
		d, err := r.Memory.Drain(ctx, 0)
		tr.Dispatched += d
		if err != nil {
			return tr, err
		}
		if rel.Published == 0 && rel.Sweep.Claimed == 0 && rel.Campaigns.Claimed == 0 {
			break
		}
	}
	return tr, nil
}

// fire invokes the timer function name through the router and decodes its ReturnValue
// into out. A non-2xx answer is an error carrying the function's error text.
func (r *Runtime) fire(ctx context.Context, name string, out any) error {
	code, body, err := r.host.FireTimer(ctx, name)
	if err != nil {
		return err
	}
	if code/100 != 2 {
		return fmt.Errorf("%s answered %d: %s", name, code, bytes.TrimSpace(body))
	}
	var res struct {
		ReturnValue json.RawMessage
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return fmt.Errorf("%s: invocation response: %w", name, err)
	}
	if len(res.ReturnValue) == 0 || string(res.ReturnValue) == "null" {
		return fmt.Errorf("%s acknowledged without running: %s", name, bytes.TrimSpace(body))
	}
	return json.Unmarshal(res.ReturnValue, out)
}

// DeadLetteredError is a message its function recorded as a dead letter: it can never
// succeed (a malformed body, an invalid event), so it was acknowledged, not retried.
type DeadLetteredError struct {
	Function  string
	MessageID string
	Blob      string // the dead-letter record in the diagnostics store
	Reason    string // as recorded
}

func (e *DeadLetteredError) Error() string {
	return e.Function + " dead-lettered message " + e.MessageID + ": " + e.Reason
}

// DeliverEvent hands m (a domain-events message: Body the CloudEvent JSON, ID its event id,
// SessionID its entity guid; see publish.Message) to DomainEventHandler through the router
// now, as the host delivers a message of the topic, and answers synchronously: nil when the
// event was processed; a *DeadLetteredError when the handler recorded it as a dead letter
// (Reason is the recorded reason: the event's validation error); any other error for a
// failure the host would retry. Needs the in-process bus; m.ID must not be empty.
func (r *Runtime) DeliverEvent(ctx context.Context, m bus.Message) error {
	if r.host == nil {
		return errors.New("app: DeliverEvent needs the in-process bus")
	}
	if m.ID == "" {
		return errors.New("app: DeliverEvent: the message needs an ID")
	}
	m.Destination = topology.DomainEventsTopic
	code, body, err := r.host.Deliver(ctx, m.Destination, m)
	if err != nil {
		return err
	}
	if code/100 != 2 {
		return fmt.Errorf("%s answered %d: %s", topology.DomainEventHandler, code, bytes.TrimSpace(body))
	}
	var res struct {
		ReturnValue json.RawMessage
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return fmt.Errorf("%s: invocation response: %w", topology.DomainEventHandler, err)
	}
	if len(res.ReturnValue) > 0 && string(res.ReturnValue) != "null" {
		return nil // processed
	}
	// Acknowledged without a result: a permanent failure, which the handler records.
	name := trace.DeadLetterBlobName(topology.DomainEventHandler, m.ID)
	raw, err := r.Trace.GetBlob(ctx, name)
	if err != nil {
		return fmt.Errorf("%s acknowledged message %s without processing it, and its dead-letter record %s: %w (%s)",
			topology.DomainEventHandler, m.ID, name, err, bytes.TrimSpace(body))
	}
	var rec struct {
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return fmt.Errorf("dead-letter record %s: %w", name, err)
	}
	return &DeadLetteredError{Function: topology.DomainEventHandler, MessageID: m.ID, Blob: name, Reason: rec.Reason}
}

// telemetryOptions maps the OTEL_* settings onto telemetry.Options.
func telemetryOptions(c config.TelemetryConfig) telemetry.Options {
	return telemetry.Options{Disabled: c.Disabled, Endpoint: c.Endpoint, Headers: c.Headers, ServiceName: c.ServiceName,
		ResourceAttributes: c.ResourceAttributes, Sampler: c.Sampler, Ratio: c.SamplerRatio, MetricsOTLP: c.MetricsOTLP,
		MetricsPrometheus: c.MetricsPrometheus, MetricInterval: c.MetricInterval}
}
