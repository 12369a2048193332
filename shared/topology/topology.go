package topology

import "time"

// Service Bus entities (infra/modules/servicebus.bicep creates them in Azure; the
// in-process bus uses the same names as destinations).
const (
	// DomainEventsTopic carries the domain apps' CloudEvents (MessageId = events.Identity(source, id),
	// SessionId = entity guid); AutomationSubscription is the pipeline's subscription.
	DomainEventsTopic      = "domain-events"
	AutomationSubscription = "automation"
	// DueWorkQueue carries one claimed scheduler row per message in fan-out mode.
	DueWorkQueue = "due-work"
	// NotificationDispatchQueue carries one delivery (by delivery key) per message.
	NotificationDispatchQueue = "notification-dispatch"
	// DeliveryFactsTopic carries one message per status change of a delivery command;
	// ReportingSubscription is the reporting projection's subscription.
	DeliveryFactsTopic    = "delivery-facts"
	ReportingSubscription = "reporting"
	// The event gateway's topics (docs/gateway.md#routing): MessageId "{eventId}:{route}",
	// SessionId the customer or entity id. EventsTopic feeds the rule/points engine
	// (RulesSubscription), TrackingTopic the attribute engine (AttributesSubscription), and
	// NotiTopic our delivery stage (DeliverySubscription, NotiDelivery).
	EventsTopic            = "events"
	RulesSubscription      = "rules"
	TrackingTopic          = "tracking"
	AttributesSubscription = "attributes"
	NotiTopic              = "noti"
	DeliverySubscription   = "delivery"
	// Campaigns (docs/campaigns.md): CampaignsSubscription is the campaign dispatcher's
	// subscription to EventsTopic (the gateway's DIRECT route); CampaignCommandsQueue carries one
	// command id per message to the worker, CampaignResultsQueue one terminal result per
	// message back to the dispatcher; CampaignFactsTopic carries CampaignActionOutcomeEvent facts.
	CampaignsSubscription = "campaigns"
	CampaignCommandsQueue = "campaign-commands"
	CampaignResultsQueue  = "campaign-results"
	CampaignFactsTopic    = "campaign-facts"
	// CampaignFeeFactsTopic carries CampaignFeeEvent facts (one per status change of a fee
	// transfer, docs/budgets.md#fee-facts-and-the-projection) to the fee projection.
	CampaignFeeFactsTopic = "campaign-fee-facts"
)

// Subscription is one subscription of a topic. Sessions: it requires sessions (the
// publisher sets SessionId; its consumer's function.json sets "isSessionsEnabled").
type Subscription struct {
	Topic, Name string
	Sessions    bool
}

// queues and subscriptions are every Service Bus entity the app uses, as
// infra/modules/servicebus.bicep creates them (a test holds them equal) and as the Service
// Bus emulator's Config.json declares them (shared/azurestack generates it from these). A
// topic is the set of its subscriptions' topics. Every queue and topic has duplicate
// detection on.
var (
	queues        = []string{DueWorkQueue, NotificationDispatchQueue, CampaignCommandsQueue, CampaignResultsQueue}
	subscriptions = []Subscription{
		{Topic: DomainEventsTopic, Name: AutomationSubscription, Sessions: true},
		{Topic: DeliveryFactsTopic, Name: ReportingSubscription},
		{Topic: EventsTopic, Name: RulesSubscription, Sessions: true},
		{Topic: EventsTopic, Name: CampaignsSubscription, Sessions: true},
		{Topic: TrackingTopic, Name: AttributesSubscription, Sessions: true},
		{Topic: NotiTopic, Name: DeliverySubscription, Sessions: true},
		{Topic: CampaignFactsTopic, Name: ReportingSubscription},
		{Topic: CampaignFeeFactsTopic, Name: ReportingSubscription},
	}
)

// Queues returns the app's Service Bus queues, in the order servicebus.bicep lists them.
func Queues() []string { return append([]string(nil), queues...) }

// Subscriptions returns the app's topic subscriptions (topics in first-seen order).
func Subscriptions() []Subscription { return append([]Subscription(nil), subscriptions...) }

// Function names: the folder names under functions/, which are also the paths the
// Functions host POSTs invocations to.
const (
	DomainEventHandler     = "DomainEventHandler"
	DueWorkPoller          = "DueWorkPoller"
	DueWorkExecutor        = "DueWorkExecutor"
	InboxAPI               = "InboxApi"
	NotificationDispatch   = "NotificationDispatch"
	OutboxRelay            = "OutboxRelay"
	DeliveryFactProjection = "DeliveryFactProjection"
	Reconciliation         = "Reconciliation"
	BusinessUnitsAPI       = "BusinessUnitsApi"
	Console                = "Console"
	ReminderSettingsAPI    = "ReminderSettingsApi"
	ReportSubscriptionsAPI = "ReportSubscriptionsApi"
	ReportRunsAPI          = "ReportRunsApi"
	SupportAPI             = "SupportApi"
	EventIngest            = "EventIngest"
	EventRegistryAPI       = "EventRegistryApi"
	NotiDelivery           = "NotiDelivery"
	TrackingProcessor      = "TrackingProcessor"
	AttributesAPI          = "AttributesApi"
	CampaignDispatch       = "CampaignDispatch"
	CampaignWorker         = "CampaignWorker"
	CampaignResults        = "CampaignResults"
	CampaignFactProjection = "CampaignFactProjection"
	CampaignFeeProjection  = "CampaignFeeProjection"
	CampaignsAPI           = "CampaignsApi"
	BudgetAPI              = "BudgetApi"
	OpenAPIDocument        = "OpenApi"
	APIKeysAPI             = "ApiKeysApi"
	ConsoleSessionsAPI     = "ConsoleSessionsApi"
	DevicesAPI             = "DevicesApi"
	TemplatesAPI           = "TemplatesApi"
	// PreferencesAPI serves recipient preferences, quiet hours and the inbound SMS STOP
	// webhook; Unsubscribe the anonymous one-click unsubscribe link (its signed token is the
	// credential, as a mailbox provider's RFC 8058 POST carries no other).
	PreferencesAPI = "PreferencesApi"
	Unsubscribe    = "Unsubscribe"
)

// MaxMessageBatchSize is the most messages one invocation of a "cardinality": "many"
// Service Bus function receives: host.json's extensions.serviceBus.maxMessageBatchSize on
// Azure (a test holds them equal), and the batch the local host hands over.
const MaxMessageBatchSize = 100

// LockDuration is the peek-lock duration of every Service Bus queue and subscription
// (infra/modules/servicebus.bicep's lockDuration, PT5M, the most Service Bus allows; a test
// holds them equal). The Functions host renews the lock of a single-message function up to
// host.json's maxAutoLockRenewalDuration, but not the locks of a "cardinality": "many"
// batch, so a batch invocation must answer within LockDuration (BatchDeadline).
const LockDuration = 5 * time.Minute

// BatchDeadline is how long a batch invocation keeps starting work by default: half of
// LockDuration, so the chunk under way when it passes has the other half to finish and the
// answer reaches the host while every lock of the batch still holds
// (docs/functions-protocol.md#service-bus-batches "Deadline"; config
// AUTOMATION_BATCH_DEADLINE_SECONDS overrides it).
const BatchDeadline = LockDuration / 2

// Trigger binding types of function.json (the same strings as funchost's Trigger* names).
const (
	TimerTrigger      = "timerTrigger"
	ServiceBusTrigger = "serviceBusTrigger"
	HTTPTrigger       = "httpTrigger"
)

// Function is one row of the table: a function and its trigger binding.
type Function struct {
	Name    string
	Trigger string // TimerTrigger, ServiceBusTrigger or HTTPTrigger
	Binding string // the trigger binding's name, which the handler reads ("timer", "message", "req")
	// Schedule is a timer's NCRONTAB schedule as function.json writes it: an app-setting
	// reference such as "%DueWorkSchedule%" (config.Config.Lookup resolves it).
	Schedule string
	// Queue, or Topic and Subscription: a Service Bus trigger's entity. Sessions: the
	// subscription is session-enabled (per-entity order).
	Queue, Topic, Subscription string
	Sessions                   bool
	// Many: a Service Bus trigger declared with "cardinality": "many", which the host hands
	// up to MaxMessageBatchSize waiting messages per invocation (an array payload) instead of
	// one: NotificationDispatch (its dispatcher claims and records a batch in two
	// transactions, and a redelivered message whose job is done is a no-op),
	// DeliveryFactProjection and CampaignFactProjection (each applies its batch of facts in
	// one transaction; a fact's revision makes a redelivered one a no-op), CampaignResults
	// (moves the chains of its batch in one transaction; a result whose chain moved on is a
	// no-op), CampaignDispatch (a session-enabled batch: the executions its trigger events
	// start are written in one transaction; a replayed event finds its execution and writes
	// nothing), CampaignWorker (claims the commands of its batch in one transaction and runs
	// each; a command already claimed or ended is left alone), and TrackingProcessor (a session-enabled batch: the host takes
	// a batch from one session at a time, in order; the engine applies it in one
	// transaction, a redelivered event is a Duplicate).
	Many bool
	// Route is an HTTP trigger's route template below the "api" prefix, Methods its
	// lower-case methods.
	Route   string
	Methods []string
}

// Destination is the bus destination a Service Bus function consumes (its queue, else its
// topic); "" for other triggers.
func (f Function) Destination() string {
	if f.Queue != "" {
		return f.Queue
	}
	return f.Topic
}

// functions is the table, sorted by name (as LoadFunctionFolders lists the folders).
var functions = []Function{
	{Name: APIKeysAPI, Trigger: HTTPTrigger, Binding: "req", Route: "keys/{*path}", Methods: []string{"get", "post"}},
	{Name: AttributesAPI, Trigger: HTTPTrigger, Binding: "req", Route: "attributes/{*path}", Methods: []string{"get"}},
	{Name: BudgetAPI, Trigger: HTTPTrigger, Binding: "req", Route: "budgets/{*path}", Methods: []string{"get", "post", "put"}},
	{Name: BusinessUnitsAPI, Trigger: HTTPTrigger, Binding: "req", Route: "business-units/{*rest}", Methods: []string{"get", "post", "put"}},
	{Name: Console, Trigger: HTTPTrigger, Binding: "req", Route: "console/{*path}", Methods: []string{"get", "post"}},
	{Name: ConsoleSessionsAPI, Trigger: HTTPTrigger, Binding: "req", Route: "console-sessions/{*path}", Methods: []string{"post"}},
	{Name: CampaignDispatch, Trigger: ServiceBusTrigger, Binding: "message", Topic: EventsTopic, Subscription: CampaignsSubscription, Sessions: true, Many: true},
	{Name: CampaignFactProjection, Trigger: ServiceBusTrigger, Binding: "message", Topic: CampaignFactsTopic, Subscription: ReportingSubscription, Many: true},
	{Name: CampaignFeeProjection, Trigger: ServiceBusTrigger, Binding: "message", Topic: CampaignFeeFactsTopic, Subscription: ReportingSubscription},
	{Name: CampaignResults, Trigger: ServiceBusTrigger, Binding: "message", Queue: CampaignResultsQueue, Many: true},
	{Name: CampaignWorker, Trigger: ServiceBusTrigger, Binding: "message", Queue: CampaignCommandsQueue, Many: true},
	{Name: CampaignsAPI, Trigger: HTTPTrigger, Binding: "req", Route: "campaigns/{*path}", Methods: []string{"get", "post", "put"}},
	{Name: DeliveryFactProjection, Trigger: ServiceBusTrigger, Binding: "message", Topic: DeliveryFactsTopic, Subscription: ReportingSubscription, Many: true},
	{Name: DevicesAPI, Trigger: HTTPTrigger, Binding: "req", Route: "devices/{*path}", Methods: []string{"get", "put", "delete"}},
	{Name: PreferencesAPI, Trigger: HTTPTrigger, Binding: "req", Route: "preferences/{*path}", Methods: []string{"get", "put", "delete", "post"}},
	{Name: Unsubscribe, Trigger: HTTPTrigger, Binding: "req", Route: "unsubscribe", Methods: []string{"get", "post"}},
	{Name: DomainEventHandler, Trigger: ServiceBusTrigger, Binding: "message", Topic: DomainEventsTopic, Subscription: AutomationSubscription, Sessions: true},
	{Name: DueWorkExecutor, Trigger: ServiceBusTrigger, Binding: "message", Queue: DueWorkQueue},
	{Name: DueWorkPoller, Trigger: TimerTrigger, Binding: "timer", Schedule: "%DueWorkSchedule%"},
	{Name: EventIngest, Trigger: HTTPTrigger, Binding: "req", Route: "events/{*path}", Methods: []string{"get", "post"}},
	{Name: EventRegistryAPI, Trigger: HTTPTrigger, Binding: "req", Route: "event-registry/{*path}", Methods: []string{"get", "post", "put"}},
	{Name: NotiDelivery, Trigger: ServiceBusTrigger, Binding: "message", Topic: NotiTopic, Subscription: DeliverySubscription, Sessions: true},
	{Name: InboxAPI, Trigger: HTTPTrigger, Binding: "req", Route: "inbox/{*path}", Methods: []string{"get", "post"}},
	{Name: NotificationDispatch, Trigger: ServiceBusTrigger, Binding: "message", Queue: NotificationDispatchQueue, Many: true},
	{Name: OpenAPIDocument, Trigger: HTTPTrigger, Binding: "req", Route: "openapi.json", Methods: []string{"get"}},
	{Name: OutboxRelay, Trigger: TimerTrigger, Binding: "timer", Schedule: "%OutboxRelaySchedule%"},
	{Name: Reconciliation, Trigger: TimerTrigger, Binding: "timer", Schedule: "%ReconciliationSchedule%"},
	{Name: ReminderSettingsAPI, Trigger: HTTPTrigger, Binding: "req", Route: "reminder-settings/{*rest}", Methods: []string{"get", "post", "put"}},
	{Name: ReportRunsAPI, Trigger: HTTPTrigger, Binding: "req", Route: "report-runs/{*path}", Methods: []string{"get", "post", "put", "delete"}},
	{Name: ReportSubscriptionsAPI, Trigger: HTTPTrigger, Binding: "req", Route: "report-subscriptions/{*path}", Methods: []string{"get", "post", "put", "delete"}},
	{Name: SupportAPI, Trigger: HTTPTrigger, Binding: "req", Route: "support/{*path}", Methods: []string{"get", "post"}},
	{Name: TemplatesAPI, Trigger: HTTPTrigger, Binding: "req", Route: "templates/{*path}", Methods: []string{"get", "post", "put", "delete"}},
	{Name: TrackingProcessor, Trigger: ServiceBusTrigger, Binding: "message", Topic: TrackingTopic, Subscription: AttributesSubscription, Sessions: true, Many: true},
}

// Functions returns a copy of the table, sorted by name.
func Functions() []Function {
	out := make([]Function, len(functions))
	for i, f := range functions {
		f.Methods = append([]string(nil), f.Methods...)
		out[i] = f
	}
	return out
}

// Lookup returns the row of the function called name (exact spelling).
func Lookup(name string) (Function, bool) {
	for _, f := range functions {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

// Consumer returns the Service Bus function that consumes destination (a queue or topic).
func Consumer(destination string) (Function, bool) {
	for _, f := range functions {
		if f.Trigger == ServiceBusTrigger && f.Destination() == destination {
			return f, true
		}
	}
	return Function{}, false
}
