package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/config"
)

// AUTOMATION_CHANNEL_LIMITS is parsed strictly: a good object yields each channel's limits,
// and every bad form is refused naming the setting, the channel and the member.
func TestChannelLimits(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{
		"AUTOMATION_CHANNEL_LIMITS": `{"sms":{"concurrency":8,"ratePerSecond":2.5,"timeoutSeconds":20},"push":{"concurrency":16},"email":{}}`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if g := c.ChannelLimits["sms"]; g.Concurrency != 8 || g.RatePerSecond != 2.5 || g.Timeout != 20*time.Second {
		t.Errorf("sms %+v", g)
	}
	if g := c.ChannelLimits["push"]; g.Concurrency != 16 || g.RatePerSecond != 0 || g.Timeout != 0 {
		t.Errorf("push %+v", g)
	}
	if _, ok := c.ChannelLimits["email"]; !ok || len(c.ChannelLimits) != 3 {
		t.Errorf("limits %+v", c.ChannelLimits)
	}
	if c, err := config.Load(env(map[string]string{"AUTOMATION_CHANNEL_LIMITS": " "})); err != nil || c.ChannelLimits != nil {
		t.Errorf("blank: %+v %v", c.ChannelLimits, err)
	}
	for v, want := range map[string]string{
		`[]`:                                  "JSON object",
		`{"fax":{"concurrency":1}}`:           `"fax": not a delivery channel`,
		`{"sms":{"concurency":1}}`:            `sms: unknown member "concurency"`,
		`{"sms":{"concurrency":0}}`:           "sms.concurrency: want 1..256",
		`{"sms":{"concurrency":257}}`:         "sms.concurrency: want 1..256",
		`{"sms":{"concurrency":"4"}}`:         "sms.concurrency:",
		`{"sms":{"ratePerSecond":-1}}`:        "sms.ratePerSecond: want 0..100000",
		`{"whatsapp":{"timeoutSeconds":301}}`: "whatsapp.timeoutSeconds: want 0..300",
		`{"push":null}`:                       "push: want an object",
		`{"sms":{"timeoutSeconds":1.5}}`:      "sms.timeoutSeconds:",
	} {
		_, err := config.Load(env(map[string]string{"AUTOMATION_CHANNEL_LIMITS": v}))
		if err == nil || !strings.Contains(err.Error(), "AUTOMATION_CHANNEL_LIMITS") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming AUTOMATION_CHANNEL_LIMITS and %q", v, err, want)
		}
	}
}

// The channels are delivery channels' names, which no campaign provider may take: the
// newer push, sms and whatsapp too.
func TestCampaignProviderCannotTakeANewChannelName(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"push", "sms", "whatsapp"} {
		_, err := config.Load(env(map[string]string{"AUTOMATION_CAMPAIGN_PROVIDERS": `[{"name":"` + n + `","baseUrl":"https://p.example.test","actionTypes":["TOP_UP"]}]`}))
		if err == nil || !strings.Contains(err.Error(), "delivery channel") {
			t.Errorf("%s: %v", n, err)
		}
	}
}
