package azurestack

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/topology"
)

// EmulatorNamespace is the one namespace name the Service Bus emulator accepts.
const EmulatorNamespace = "sbemulatorns"

// ConfigPath is the committed emulator Config.json, relative to the repository root, which
// docker-compose.azure.yml mounts at /ServiceBus_Emulator/ConfigFiles/Config.json.
const ConfigPath = "scripts/azure-stack/servicebus-config.json"

// ConformanceQueues are the queues the Service Bus conformance suite (shared/azure
// TestServiceBusConformance, bustest.DestinationA and DestinationB) sends to and empties:
// duplicate detection on, no sessions, MaxDeliveryCount above 3, used for nothing else.
var ConformanceQueues = []string{"bustest-a", "bustest-b"}

// Values of the deployed entities (infra/modules/servicebus.bicep; a test reads them there)
// and the emulator's maxima where Azure allows more.
const (
	// MaxDeliveryCount is servicebus.bicep's maxDeliveryCount (10, also the emulator's most).
	MaxDeliveryCount = 10
	// EmulatorDuplicateWindow is the emulator's longest duplicate-detection window; the
	// deployed window is PT10M.
	EmulatorDuplicateWindow = 5 * time.Minute
	// EmulatorMessageTTL is the emulator's longest message time-to-live.
	EmulatorMessageTTL = time.Hour
	// conformanceLock is the conformance queues' lock: the suite abandons what it does not
	// complete, so it never waits for a lock to expire; one minute is the emulator's default.
	conformanceLock = time.Minute
)

// EmulatorConfig is the emulator's Config.json document ("UserConfig").
type EmulatorConfig struct {
	UserConfig UserConfig `json:"UserConfig"`
}

// UserConfig holds the namespace (exactly one) and the logging choice.
type UserConfig struct {
	Namespaces []Namespace `json:"Namespaces"`
	Logging    Logging     `json:"Logging"`
}

// Logging is where the emulator logs: "File" or "Console".
type Logging struct {
	Type string `json:"Type"`
}

// Namespace is the emulator's namespace and its entities.
type Namespace struct {
	Name   string  `json:"Name"`
	Queues []Queue `json:"Queues"`
	Topics []Topic `json:"Topics"`
}

// Queue is one queue.
type Queue struct {
	Name       string          `json:"Name"`
	Properties QueueProperties `json:"Properties"`
}

// QueueProperties are a queue's settings; durations are ISO 8601 ("PT5M").
type QueueProperties struct {
	DeadLetteringOnMessageExpiration    bool   `json:"DeadLetteringOnMessageExpiration"`
	DefaultMessageTimeToLive            string `json:"DefaultMessageTimeToLive"`
	DuplicateDetectionHistoryTimeWindow string `json:"DuplicateDetectionHistoryTimeWindow"`
	ForwardDeadLetteredMessagesTo       string `json:"ForwardDeadLetteredMessagesTo"`
	ForwardTo                           string `json:"ForwardTo"`
	LockDuration                        string `json:"LockDuration"`
	MaxDeliveryCount                    int    `json:"MaxDeliveryCount"`
	RequiresDuplicateDetection          bool   `json:"RequiresDuplicateDetection"`
	RequiresSession                     bool   `json:"RequiresSession"`
}

// Topic is one topic with its subscriptions.
type Topic struct {
	Name          string          `json:"Name"`
	Properties    TopicProperties `json:"Properties"`
	Subscriptions []Subscription  `json:"Subscriptions"`
}

// TopicProperties are a topic's settings.
type TopicProperties struct {
	DefaultMessageTimeToLive            string `json:"DefaultMessageTimeToLive"`
	DuplicateDetectionHistoryTimeWindow string `json:"DuplicateDetectionHistoryTimeWindow"`
	RequiresDuplicateDetection          bool   `json:"RequiresDuplicateDetection"`
}

// Subscription is one subscription (no rules: it takes every message of its topic, as the
// deployed ones do).
type Subscription struct {
	Name       string                 `json:"Name"`
	Properties SubscriptionProperties `json:"Properties"`
}

// SubscriptionProperties are a subscription's settings.
type SubscriptionProperties struct {
	DeadLetteringOnMessageExpiration bool   `json:"DeadLetteringOnMessageExpiration"`
	DefaultMessageTimeToLive         string `json:"DefaultMessageTimeToLive"`
	LockDuration                     string `json:"LockDuration"`
	MaxDeliveryCount                 int    `json:"MaxDeliveryCount"`
	ForwardDeadLetteredMessagesTo    string `json:"ForwardDeadLetteredMessagesTo"`
	ForwardTo                        string `json:"ForwardTo"`
	RequiresSession                  bool   `json:"RequiresSession"`
}

// Emulator returns the emulator configuration of the topology: the app's queues (in
// topology.Queues order) and then ConformanceQueues, and one topic per topic of
// topology.Subscriptions (in first-seen order) with its subscriptions.
func Emulator() EmulatorConfig {
	queue := func(name string, lock time.Duration) Queue {
		return Queue{Name: name, Properties: QueueProperties{
			DeadLetteringOnMessageExpiration:    true,
			DefaultMessageTimeToLive:            isoDuration(EmulatorMessageTTL),
			DuplicateDetectionHistoryTimeWindow: isoDuration(EmulatorDuplicateWindow),
			LockDuration:                        isoDuration(lock),
			MaxDeliveryCount:                    MaxDeliveryCount,
			RequiresDuplicateDetection:          true,
		}}
	}
	ns := Namespace{Name: EmulatorNamespace, Queues: []Queue{}, Topics: []Topic{}}
	for _, q := range topology.Queues() {
		ns.Queues = append(ns.Queues, queue(q, topology.LockDuration))
	}
	for _, q := range ConformanceQueues {
		ns.Queues = append(ns.Queues, queue(q, conformanceLock))
	}
	at := map[string]int{}
	for _, s := range topology.Subscriptions() {
		i, ok := at[s.Topic]
		if !ok {
			i = len(ns.Topics)
			at[s.Topic] = i
			ns.Topics = append(ns.Topics, Topic{Name: s.Topic, Properties: TopicProperties{
				DefaultMessageTimeToLive:            isoDuration(EmulatorMessageTTL),
				DuplicateDetectionHistoryTimeWindow: isoDuration(EmulatorDuplicateWindow),
				RequiresDuplicateDetection:          true,
			}})
		}
		ns.Topics[i].Subscriptions = append(ns.Topics[i].Subscriptions, Subscription{Name: s.Name, Properties: SubscriptionProperties{
			DeadLetteringOnMessageExpiration: true,
			DefaultMessageTimeToLive:         isoDuration(EmulatorMessageTTL),
			LockDuration:                     isoDuration(topology.LockDuration),
			MaxDeliveryCount:                 MaxDeliveryCount,
			RequiresSession:                  s.Sessions,
		}})
	}
	return EmulatorConfig{UserConfig: UserConfig{Namespaces: []Namespace{ns}, Logging: Logging{Type: "File"}}}
}

// MarshalEmulator returns Emulator() as the committed file holds it: JSON indented by two
// spaces, with a final newline.
func MarshalEmulator() ([]byte, error) {
	b, err := json.MarshalIndent(Emulator(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("azurestack: emulator config: %w", err)
	}
	return append(b, '\n'), nil
}

// isoDuration writes a whole number of hours, minutes or seconds as ISO 8601 ("PT1H",
// "PT5M", "PT30S"); d must be a positive whole number of seconds.
func isoDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("PT%dH", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("PT%dM", d/time.Minute)
	default:
		return fmt.Sprintf("PT%dS", d/time.Second)
	}
}
