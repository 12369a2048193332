package config_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/config"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.UsesSQLServer() || c.UsesServiceBus() || c.UsesAzureStorage() || c.DueWorkMode != config.ModeInline ||
		c.DueWorkBatchSize != 100 || c.DueWorkDrainBatches != 1000 || c.Lease != 5*time.Minute || c.DataDir != ".data" || c.DueWorkSchedule != "*/30 * * * * *" {
		t.Fatalf("%+v", c)
	}
}

func TestBadValuesNameTheVariable(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"AUTOMATION_DUEWORK_MODE":          "sideways",
		"AUTOMATION_DUEWORK_BATCH_SIZE":    "5000",
		"AUTOMATION_DUEWORK_CONCURRENCY":   "x",
		"AUTOMATION_DUEWORK_DRAIN_BATCHES": "0",
		"AUTOMATION_LEASE_SECONDS":         "5",
		"AUTOMATION_LOG_LEVEL":             "loud",
		"FUNCTIONS_CUSTOMHANDLER_PORT":     "70000",
		"AUTOMATION_SERVICEBUS_NAMESPACE":  "https://x.servicebus.windows.net/",
		"AUTOMATION_STORAGE_CONNECTION":    "UseDevelopmentStorage=true",
		"AUTOMATION_STORAGE_TABLE_URL":     "http://example.com",
		"AUTOMATION_CONSUMER_BATCH":        "campaign-results=0",
	}
	for name, v := range cases {
		_, err := config.Load(env(map[string]string{name: v}))
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: err = %v", name, v, err)
		}
	}
	_, err := config.Load(env(map[string]string{"AUTOMATION_SERVICEBUS_CONNECTION": "Endpoint=sb://x/", "AUTOMATION_SERVICEBUS_NAMESPACE": "x.servicebus.windows.net"}))
	if err == nil {
		t.Fatal("both Service Bus settings accepted")
	}
}

func TestSettingsAreUniqueAndDocumented(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, s := range config.Settings {
		if seen[s.Name] || s.Doc == "" || s.Where == 0 {
			t.Errorf("setting %s duplicated, undocumented or declared nowhere", s.Name)
		}
		seen[s.Name] = true
	}
}

// The billing provider: none by default; an https URL (http only on loopback) with an
// optional token; a token without a URL, or a plain-http remote URL, is refused.
func TestBillingSettings(t *testing.T) {
	c, err := config.Load(env(nil))
	if err != nil || c.Billing.URL != "" || c.Billing.Timeout != 10*time.Second {
		t.Fatalf("default: %+v %v", c.Billing, err)
	}
	// The billing client's timeout is a setting (issue 33, item 11).
	if c, err := config.Load(env(map[string]string{"AUTOMATION_BILLING_TIMEOUT_SECONDS": "45"})); err != nil || c.Billing.Timeout != 45*time.Second {
		t.Fatalf("timeout 45: %+v %v", c.Billing, err)
	}
	c, err = config.Load(env(map[string]string{"AUTOMATION_BILLING_URL": "https://billing.example.test/", "AUTOMATION_BILLING_TOKEN": "t0k"}))
	if err != nil || c.Billing.URL != "https://billing.example.test" || c.Billing.Token != "t0k" {
		t.Fatalf("https: %+v %v", c.Billing, err)
	}
	if _, err := config.Load(env(map[string]string{"AUTOMATION_BILLING_URL": "http://127.0.0.1:8089"})); err != nil {
		t.Fatalf("loopback http: %v", err)
	}
	for _, bad := range []map[string]string{
		{"AUTOMATION_BILLING_URL": "http://billing.example.test"},
		{"AUTOMATION_BILLING_URL": "not a url"},
		{"AUTOMATION_BILLING_TOKEN": "t0k"},
		{"AUTOMATION_BILLING_TIMEOUT_SECONDS": "0"},
		{"AUTOMATION_BILLING_TIMEOUT_SECONDS": "301"},
	} {
		if _, err := config.Load(env(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// OIDC: issuer and audience together, an https issuer (http on loopback), and credentials on.
func TestOIDCSettings(t *testing.T) {
	ok := map[string]string{"AUTOMATION_API_TOKEN": "t", "AUTOMATION_OIDC_ISSUER": "https://login.microsoftonline.com/x/v2.0", "AUTOMATION_OIDC_AUDIENCE": "api://a"}
	c, err := config.Load(env(ok))
	if err != nil || c.OIDC.Issuer != ok["AUTOMATION_OIDC_ISSUER"] || c.OIDC.Audience != "api://a" || c.OIDC.RoleClaim != "roles" || c.OIDC.UnitsClaim != "automation_units" {
		t.Fatalf("%+v %v", c.OIDC, err)
	}
	for name, over := range map[string]map[string]string{
		"no audience":    {"AUTOMATION_OIDC_AUDIENCE": ""},
		"plain http":     {"AUTOMATION_OIDC_ISSUER": "http://idp.example/"},
		"no credentials": {"AUTOMATION_API_TOKEN": ""},
	} {
		m := map[string]string{}
		for k, v := range ok {
			m[k] = v
		}
		for k, v := range over {
			m[k] = v
		}
		if _, err := config.Load(env(m)); err == nil || !strings.Contains(err.Error(), "AUTOMATION_OIDC_ISSUER") {
			t.Errorf("%s: %v", name, err)
		}
	}
	m := map[string]string{"AUTOMATION_API_TOKEN": "t", "AUTOMATION_OIDC_ISSUER": "http://127.0.0.1:9090", "AUTOMATION_OIDC_AUDIENCE": "a"}
	if _, err := config.Load(env(m)); err != nil {
		t.Fatalf("loopback http: %v", err)
	}
}

// TestConsumerBatch: AUTOMATION_CONSUMER_BATCH is destination=count pairs (count 1..1000);
// empty (the default) names none, so every batch function takes 100; a bad pair names the
// variable and the pair.
func TestConsumerBatch(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	if err != nil || len(c.ConsumerBatch) != 0 {
		t.Fatalf("default: %v %v", c.ConsumerBatch, err)
	}
	c, err = config.Load(env(map[string]string{"AUTOMATION_CONSUMER_BATCH": " campaign-results=50, tracking = 200 "}))
	if err != nil || len(c.ConsumerBatch) != 2 || c.ConsumerBatch["campaign-results"] != 50 || c.ConsumerBatch["tracking"] != 200 {
		t.Fatalf("%v %v", c.ConsumerBatch, err)
	}
	for _, v := range []string{"tracking", "tracking=1001", "=5", "tracking=x"} {
		_, err := config.Load(env(map[string]string{"AUTOMATION_CONSUMER_BATCH": v}))
		if err == nil || !strings.Contains(err.Error(), "AUTOMATION_CONSUMER_BATCH") {
			t.Errorf("%q: err = %v", v, err)
		}
	}
}

// AUTOMATION_TRUSTED_PROXIES: none by default (the peer is the client); IPs and CIDR
// prefixes otherwise, a single IP as its one-address prefix; anything else, a zone, or more
// than 64 entries is refused naming the setting.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	if err != nil || c.TrustedProxies != nil {
		t.Fatalf("default: %v %v", c.TrustedProxies, err)
	}
	c, err = config.Load(env(map[string]string{"AUTOMATION_TRUSTED_PROXIES": " 127.0.0.1 , ::1,10.1.2.3/8"}))
	if err != nil || fmt.Sprint(c.TrustedProxies) != "[127.0.0.1/32 ::1/128 10.0.0.0/8]" {
		t.Fatalf("parsed: %v %v", c.TrustedProxies, err)
	}
	// An IPv4-mapped prefix names IPv4 peers: the session's ClientAddress unmaps every peer
	// and hop before it looks, so a mapped prefix kept as IPv6 would trust nobody (every
	// client behind that proxy one throttle key).
	c, err = config.Load(env(map[string]string{"AUTOMATION_TRUSTED_PROXIES": "::ffff:10.0.0.0/104,::ffff:127.0.0.1/128"}))
	if err != nil || fmt.Sprint(c.TrustedProxies) != "[10.0.0.0/8 127.0.0.1/32]" {
		t.Fatalf("mapped prefixes: %v %v", c.TrustedProxies, err)
	}
	for _, v := range []string{"localhost", "127.0.0.1,", "10.0.0.0/33", "fe80::1%eth0", "::ffff:10.0.0.0/90", "*", strings.Repeat("10.0.0.1,", 64) + "10.0.0.2"} {
		if _, err := config.Load(env(map[string]string{"AUTOMATION_TRUSTED_PROXIES": v})); err == nil || !strings.Contains(err.Error(), "AUTOMATION_TRUSTED_PROXIES") {
			t.Errorf("%q: %v", v, err)
		}
	}
}
