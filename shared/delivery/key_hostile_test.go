package delivery_test

import (
	"testing"

	"github.com/automation-platform/automation/shared/delivery"
)

// E-mail addresses compare without case, URLs do not (their path and query are
// case-sensitive: two webhook endpoints differing only there are two recipients, and
// collapsing them would lose one). A URL's scheme and host still compare without case.
func TestKeyKeepsTheCaseOfAURLPathAndQuery(t *testing.T) {
	t.Parallel()
	jobs, _, err := delivery.Build([]delivery.Request{
		{SchedulerKey: "k", Channel: "webhook", Recipient: "https://hooks.example.test/t/AbC", Payload: 1},
		{SchedulerKey: "k", Channel: "webhook", Recipient: "https://hooks.example.test/t/abc", Payload: 1},
		{SchedulerKey: "k", Channel: "webhook", Recipient: "https://hooks.example.test/t?token=Xy", Payload: 1},
		{SchedulerKey: "k", Channel: "webhook", Recipient: "https://hooks.example.test/t?token=xY", Payload: 1},
		{SchedulerKey: "k", Channel: "webhook", Recipient: "HTTPS://Hooks.Example.TEST/t/abc ", Payload: 1}, // same as the second
	})
	if err != nil || len(jobs) != 4 {
		t.Fatalf("%d jobs: %+v %v", len(jobs), jobs, err)
	}
	if delivery.Key("k", "email", "Alice@Example.test") != delivery.Key("k", "email", "alice@example.test") {
		t.Fatal("e-mail addresses must compare without case")
	}
}
