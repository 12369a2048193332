package topology_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/funchost/funchosttest"
	"github.com/automation-platform/automation/shared/topology"
)

// row turns a function folder into a table row, for comparison.
func row(d funchost.FunctionDef) topology.Function {
	t := d.Trigger
	var methods []string
	for _, m := range t.Methods {
		methods = append(methods, strings.ToLower(m))
	}
	return topology.Function{Name: d.Name, Trigger: t.Type, Binding: t.Name, Schedule: t.Schedule, Queue: t.QueueName,
		Topic: t.TopicName, Subscription: t.SubscriptionName, Sessions: t.IsSessionsEnabled, Many: t.Cardinality == "many",
		Route: t.Route, Methods: methods}
}

// The table and functions/*/function.json agree: every folder has a row and every row a
// folder, each with the same trigger type, binding name, schedule setting, queue, topic,
// subscription, sessions flag, route and methods; no folder is disabled.
func TestTableMatchesFunctionFolders(t *testing.T) {
	t.Parallel()
	defs := funchosttest.Folders(t, "../../functions")
	for _, p := range compare(defs, topology.Functions()) {
		t.Error(p)
	}
}

// compare returns every difference between the folders and the table, one sentence each.
func compare(defs []funchost.FunctionDef, table []topology.Function) []string {
	var problems []string
	rows := map[string]topology.Function{}
	for _, f := range table {
		rows[f.Name] = f
	}
	seen := map[string]bool{}
	for _, d := range defs {
		seen[d.Name] = true
		want, ok := rows[d.Name]
		if !ok {
			problems = append(problems, "function folder "+d.Name+" has no row in the topology table")
			continue
		}
		got := row(d)
		if got.Trigger != want.Trigger || got.Binding != want.Binding || got.Schedule != want.Schedule || got.Queue != want.Queue ||
			got.Topic != want.Topic || got.Subscription != want.Subscription || got.Sessions != want.Sessions || got.Many != want.Many ||
			got.Route != want.Route || !slices.Equal(got.Methods, want.Methods) {
			problems = append(problems, "function "+d.Name+": function.json says "+describe(got)+", the table "+describe(want))
		}
		if d.Disabled {
			problems = append(problems, "function "+d.Name+" is disabled in function.json")
		}
	}
	for _, f := range table {
		if !seen[f.Name] {
			problems = append(problems, "table row "+f.Name+" has no function folder")
		}
	}
	return problems
}

func describe(f topology.Function) string {
	return strings.Join([]string{f.Trigger, "binding=" + f.Binding, "schedule=" + f.Schedule, "queue=" + f.Queue, "topic=" + f.Topic,
		"subscription=" + f.Subscription, "sessions=" + map[bool]string{true: "true", false: "false"}[f.Sessions],
		"many=" + map[bool]string{true: "true", false: "false"}[f.Many],
		"route=" + f.Route, "methods=" + strings.Join(f.Methods, ",")}, " ")
}

// compare reports each kind of drift (so TestTableMatchesFunctionFolders can fail).
func TestCompareReportsDrift(t *testing.T) {
	t.Parallel()
	defs := funchosttest.Folders(t, "../../functions")
	table := topology.Functions()
	if got := compare(defs, table); len(got) != 0 {
		t.Fatalf("the real folders differ: %q", got)
	}
	cases := []struct {
		name string
		edit drift
		want string
	}{
		{"folder without a row", func(d []funchost.FunctionDef, tb []topology.Function) ([]funchost.FunctionDef, []topology.Function) {
			return d, tb[1:]
		}, "has no row in the topology table"},
		{"row without a folder", func(d []funchost.FunctionDef, tb []topology.Function) ([]funchost.FunctionDef, []topology.Function) {
			return d[1:], tb
		}, "has no function folder"},
		{"topic renamed", edited(topology.DomainEventHandler, func(f *funchost.FunctionDef) { f.Trigger.TopicName = "domain-event" }, nil), "function DomainEventHandler: function.json says"},
		{"subscription renamed", edited(topology.DeliveryFactProjection, nil, func(f *topology.Function) { f.Subscription = "reports" }), "function DeliveryFactProjection"},
		{"trigger type", edited(topology.OutboxRelay, func(f *funchost.FunctionDef) { f.Trigger.Type = funchost.TriggerServiceBus }, nil), "function OutboxRelay"},
		{"queue", edited(topology.NotificationDispatch, nil, func(f *topology.Function) { f.Queue = "dispatch" }), "function NotificationDispatch"},
		{"cardinality", edited(topology.NotificationDispatch, func(f *funchost.FunctionDef) { f.Trigger.Cardinality = "one" }, nil), "function NotificationDispatch: function.json says"},
		{"disabled", func(d []funchost.FunctionDef, tb []topology.Function) ([]funchost.FunctionDef, []topology.Function) {
			d[0].Disabled = true
			return d, tb
		}, "is disabled"},
	}
	for _, tc := range cases {
		d, tb := tc.edit(slices.Clone(defs), topology.Functions())
		got := compare(d, tb)
		if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, tc.want) }) {
			t.Errorf("%s: reported %q, want a problem containing %q", tc.name, got, tc.want)
		}
	}
}

// drift edits a copy of the function folders and of the table to make them differ.
type drift func(defs []funchost.FunctionDef, table []topology.Function) ([]funchost.FunctionDef, []topology.Function)

// edited is the drift that applies folder (when not nil) to function name's folder and row
// (when not nil) to its table row.
func edited(name string, folder func(*funchost.FunctionDef), row func(*topology.Function)) drift {
	return func(d []funchost.FunctionDef, tb []topology.Function) ([]funchost.FunctionDef, []topology.Function) {
		for i := range d {
			if d[i].Name == name && folder != nil {
				folder(&d[i])
			}
		}
		for i := range tb {
			if tb[i].Name == name && row != nil {
				row(&tb[i])
			}
		}
		return d, tb
	}
}

// Lookup and Consumer find rows by function name and by bus destination.
func TestLookupAndConsumer(t *testing.T) {
	t.Parallel()
	for dest, fn := range map[string]string{topology.DomainEventsTopic: topology.DomainEventHandler, topology.DueWorkQueue: topology.DueWorkExecutor,
		topology.NotificationDispatchQueue: topology.NotificationDispatch, topology.DeliveryFactsTopic: topology.DeliveryFactProjection, topology.NotiTopic: topology.NotiDelivery} {
		f, ok := topology.Consumer(dest)
		if !ok || f.Name != fn {
			t.Errorf("Consumer(%q) = %+v %v, want %s", dest, f, ok, fn)
		}
	}
	if _, ok := topology.Consumer("nowhere"); ok {
		t.Error("Consumer found a function for an unknown destination")
	}
	if f, ok := topology.Lookup(topology.DueWorkPoller); !ok || f.Trigger != topology.TimerTrigger || f.Destination() != "" {
		t.Errorf("Lookup(DueWorkPoller) = %+v %v", f, ok)
	}
	if _, ok := topology.Lookup("dueworkpoller"); ok {
		t.Error("Lookup is exact")
	}
	// Functions returns a copy: editing it leaves the table alone.
	fs := topology.Functions()
	fs[0].Methods[0] = "patch"
	if topology.Functions()[0].Methods[0] == "patch" {
		t.Error("Functions shares its slices with the table")
	}
	if got := []string{funchost.TriggerTimer, funchost.TriggerServiceBus, funchost.TriggerHTTP}; !slices.Equal(got,
		[]string{topology.TimerTrigger, topology.ServiceBusTrigger, topology.HTTPTrigger}) {
		t.Errorf("trigger types differ from funchost's: %q", got)
	}
}

// host.json's Service Bus batch size is the table's MaxMessageBatchSize, so a batch never
// holds more messages than the local host hands over or the dispatcher takes at once.
func TestHostJSONBatchSize(t *testing.T) {
	t.Parallel()
	raw := readRepoFile(t, "../../host.json")
	var host struct {
		Extensions struct {
			ServiceBus map[string]json.RawMessage `json:"serviceBus"`
		} `json:"extensions"`
	}
	if err := json.Unmarshal(raw, &host); err != nil {
		t.Fatal(err)
	}
	if got := string(host.Extensions.ServiceBus["maxMessageBatchSize"]); got != strconv.Itoa(topology.MaxMessageBatchSize) {
		t.Fatalf("host.json extensions.serviceBus.maxMessageBatchSize = %q, want %d", got, topology.MaxMessageBatchSize)
	}
	// A session-enabled batch holds messages of one session in order (the in-process bus's
	// next, the Service Bus extension's session receiver); only a service that applies a
	// batch in message order may take one: the attribute engine (attribute.Service.HandleBatch)
	// and the campaign dispatcher (campaign.Dispatcher.HandleEventBatch writes its starts in
	// the batch's order).
	orderedBatch := map[string]bool{topology.TrackingProcessor: true, topology.CampaignDispatch: true}
	for _, f := range topology.Functions() {
		if f.Many && (f.Trigger != topology.ServiceBusTrigger || (f.Sessions && !orderedBatch[f.Name])) {
			t.Errorf("%s: cardinality many only on a Service Bus trigger, with sessions only where the batch is applied in order", f.Name)
		}
	}
}

// The Service Bus module creates the table's entities: its parameter defaults name the same
// topics, subscriptions and queues.
func TestServiceBusModuleCreatesTheTablesEntities(t *testing.T) {
	t.Parallel()
	raw := readRepoFile(t, "../../infra/modules/servicebus.bicep")
	bicep := string(raw)
	for _, want := range []string{
		"param domainEventsTopicName string = '" + topology.DomainEventsTopic + "'",
		"param automationSubscriptionName string = '" + topology.AutomationSubscription + "'",
		"param deliveryFactsTopicName string = '" + topology.DeliveryFactsTopic + "'",
		"param reportingSubscriptionName string = '" + topology.ReportingSubscription + "'",
		"param eventsTopicName string = '" + topology.EventsTopic + "'",
		"param rulesSubscriptionName string = '" + topology.RulesSubscription + "'",
		"param trackingTopicName string = '" + topology.TrackingTopic + "'",
		"param attributesSubscriptionName string = '" + topology.AttributesSubscription + "'",
		"param notiTopicName string = '" + topology.NotiTopic + "'",
		"param deliverySubscriptionName string = '" + topology.DeliverySubscription + "'",
		"param campaignsSubscriptionName string = '" + topology.CampaignsSubscription + "'",
		"param campaignFactsTopicName string = '" + topology.CampaignFactsTopic + "'",
		"param campaignFeeFactsTopicName string = '" + topology.CampaignFeeFactsTopic + "'",
		"param queueNames array = [\n  '" + topology.DueWorkQueue + "'\n  '" + topology.NotificationDispatchQueue + "'\n  '" +
			topology.CampaignCommandsQueue + "'\n  '" + topology.CampaignResultsQueue + "'\n]",
	} {
		if !strings.Contains(bicep, want) {
			t.Errorf("infra/modules/servicebus.bicep does not declare %q", want)
		}
	}
}

// The lock durations the code plans with are the ones deployed and configured: the Service
// Bus module's lockDuration is LockDuration; BatchDeadline leaves a batch half of it; and
// host.json renews a single message's lock for at least functionTimeout, so a message is
// never redelivered under an invocation the host still waits for.
func TestLockDurations(t *testing.T) {
	t.Parallel()
	raw := readRepoFile(t, "../../infra/modules/servicebus.bicep")
	m := regexp.MustCompile(`(?m)^param lockDuration string = 'PT(\d+)M'$`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatal("infra/modules/servicebus.bicep declares no lockDuration default of whole minutes")
	}
	if mins, _ := strconv.Atoi(m[1]); time.Duration(mins)*time.Minute != topology.LockDuration {
		t.Errorf("servicebus.bicep lockDuration PT%sM, topology.LockDuration %v", m[1], topology.LockDuration)
	}
	if topology.BatchDeadline <= 0 || topology.BatchDeadline > topology.LockDuration*3/4 {
		t.Errorf("BatchDeadline %v is not well under LockDuration %v", topology.BatchDeadline, topology.LockDuration)
	}
	raw = readRepoFile(t, "../../host.json")
	var host struct {
		FunctionTimeout string `json:"functionTimeout"`
		Extensions      struct {
			ServiceBus struct {
				MaxAutoLockRenewalDuration string `json:"maxAutoLockRenewalDuration"`
			} `json:"serviceBus"`
		} `json:"extensions"`
	}
	if err := json.Unmarshal(raw, &host); err != nil {
		t.Fatal(err)
	}
	timeout, renewal := timeSpan(t, host.FunctionTimeout), timeSpan(t, host.Extensions.ServiceBus.MaxAutoLockRenewalDuration)
	if renewal < timeout {
		t.Errorf("host.json maxAutoLockRenewalDuration %v is under functionTimeout %v: a slow single message loses its lock and comes again while it runs", renewal, timeout)
	}
}

// timeSpan parses a .NET TimeSpan "hh:mm:ss" as host.json writes it.
func timeSpan(t *testing.T, s string) time.Duration {
	t.Helper()
	var h, m, sec int
	if _, err := fmt.Sscanf(s, "%d:%d:%d", &h, &m, &sec); err != nil {
		t.Fatalf("TimeSpan %q: %v", s, err)
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second
}

// The entity lists hold every Service Bus function's entity with its session setting, each
// once; and the Service Bus module gives a subscription sessions exactly when the list does.
func TestEntitiesCoverTheFunctions(t *testing.T) {
	t.Parallel()
	subs := map[[2]string]topology.Subscription{}
	for _, s := range topology.Subscriptions() {
		k := [2]string{s.Topic, s.Name}
		if _, dup := subs[k]; dup {
			t.Errorf("subscription %s/%s listed twice", s.Topic, s.Name)
		}
		subs[k] = s
	}
	for _, f := range topology.Functions() {
		if f.Trigger != topology.ServiceBusTrigger {
			continue
		}
		if f.Queue != "" {
			if !slices.Contains(topology.Queues(), f.Queue) || f.Sessions {
				t.Errorf("%s: queue %q is not listed (or wants sessions)", f.Name, f.Queue)
			}
			continue
		}
		s, ok := subs[[2]string{f.Topic, f.Subscription}]
		if !ok || s.Sessions != f.Sessions {
			t.Errorf("%s: subscription %s/%s listed %v with sessions %v, the function has sessions %v", f.Name, f.Topic, f.Subscription, ok, s.Sessions, f.Sessions)
		}
	}
	raw := readRepoFile(t, "../../infra/modules/servicebus.bicep")
	// Every subscription resource of the module with requiresSession true is named by a
	// parameter or the gateway table; count them against the list.
	bicep := string(raw)
	wantSessions := 0
	for _, s := range topology.Subscriptions() {
		if s.Sessions {
			wantSessions++
		}
	}
	// automationSubscription, the three gateway subscriptions (one resource in a loop), campaignsSubscription.
	gateway := 0
	for _, s := range topology.Subscriptions() {
		if s.Sessions && (s.Topic == topology.EventsTopic && s.Name == topology.RulesSubscription || s.Topic == topology.TrackingTopic || s.Topic == topology.NotiTopic) {
			gateway++
		}
	}
	if got := strings.Count(bicep, "requiresSession: true") - 1 + gateway; got != wantSessions {
		t.Errorf("servicebus.bicep makes %d session subscriptions, the list %d", got, wantSessions)
	}
}

// Every batch function (Many) is named as one where the docs list them: the batch section of
// docs/functions-protocol.md, the batch deadline setting (shared/config's description and
// docs/configuration.md), the deploy check of docs/deploy.md, the function table of
// docs/running.md and the resource table of infra/README.md. CampaignFactProjection became
// a batch function with none of these saying so.
func TestBatchFunctionsDocumented(t *testing.T) {
	t.Parallel()
	read := func(path string) string { return string(readRepoFile(t, path)) }
	section := func(text, from string) string {
		i := strings.Index(text, from)
		if i < 0 {
			t.Fatalf("no %q", from)
		}
		text = text[i+len(from):]
		if j := strings.Index(text, "\n\n"); j >= 0 {
			text = text[:j]
		}
		return text
	}
	line := func(text, substr string) string {
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, substr) {
				return l
			}
		}
		return ""
	}
	protocol := section(read("../../docs/functions-protocol.md"), "## Service Bus batches\n\n")
	deadline := line(read("../config/config.go"), `{"AUTOMATION_BATCH_DEADLINE_SECONDS"`)
	configuration := line(read("../../docs/configuration.md"), "| `AUTOMATION_BATCH_DEADLINE_SECONDS`")
	deploy := section(read("../../docs/deploy.md"), "5. **The batch functions.**")
	running, infra := read("../../docs/running.md"), read("../../infra/README.md")
	for _, f := range topology.Functions() {
		if !f.Many {
			continue
		}
		for where, text := range map[string]string{"docs/functions-protocol.md's batch section": protocol, "docs/deploy.md's batch check": deploy} {
			if !strings.Contains(text, "`"+f.Name+"`") {
				t.Errorf("%s does not name the batch function %s", where, f.Name)
			}
		}
		if !f.Sessions { // the deadline's chunks are those of the non-session batch path
			if !strings.Contains(deadline, f.Name) || !strings.Contains(configuration, "`"+f.Name+"`") {
				t.Errorf("AUTOMATION_BATCH_DEADLINE_SECONDS (config.go or docs/configuration.md) does not name the batch function %s", f.Name)
			}
		}
		if l := line(running, "| `"+f.Name+"` |"); !strings.Contains(l, "cardinality: many") && !strings.Contains(l, "batches") {
			t.Errorf("docs/running.md's row of %s does not say it takes batches: %q", f.Name, l)
		}
		if l := line(infra, "`"+f.Name+"`"); !strings.Contains(l, "batches") {
			t.Errorf("infra/README.md's row of %s does not say it takes batches: %q", f.Name, l)
		}
	}
}

// readRepoFile is the file at path (relative to this package: "../../host.json"), failing
// the test when it cannot be read.
func readRepoFile(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
