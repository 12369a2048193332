package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/delivery/fcmsim"
	"github.com/automation-platform/automation/shared/store"
)

func TestChannelsFromConfig(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string) config.Config {
		t.Helper()
		cfg, err := config.Load(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	clk := automation.NewManualClock(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	chs, err := ChannelsFromConfig(load(nil), nil, true, clk, nil)
	if err != nil || len(chs) != 1 || chs["log"] == nil {
		t.Fatalf("default: %v, %v", chs, err)
	}
	chs, err = ChannelsFromConfig(load(map[string]string{
		"AUTOMATION_WEBHOOK_SECRET": "0123456789abcdef0123", "AUTOMATION_SMTP_HOST": "smtp.example.test",
		"AUTOMATION_SMTP_FROM": "Reminders <noreply@example.test>"}), nil, false, clk, nil)
	if err != nil || chs["webhook"] == nil || chs["email"] == nil {
		t.Fatalf("configured: %v, %v", chs, err)
	}
	// In Azure (local=false) a webhook to http://localhost is refused; locally it is allowed.
	if err := chs["webhook"].ValidateRecipient("http://localhost:8080/hook"); err == nil {
		t.Fatal("Azure webhook channel accepted a plain-http URL")
	}
	local, _ := ChannelsFromConfig(load(map[string]string{"AUTOMATION_WEBHOOK_SECRET": "0123456789abcdef0123"}), nil, true, clk, nil)
	if err := local["webhook"].ValidateRecipient("http://localhost:8080/hook"); err != nil {
		t.Fatalf("local webhook: %v", err)
	}
	if err := chs["email"].ValidateRecipient("not an address"); err == nil {
		t.Fatal("email channel accepted a bad address")
	}
}

func TestChannelSettingsAreValidated(t *testing.T) {
	t.Parallel()
	_, err := config.Load(func(k string) string {
		return map[string]string{"AUTOMATION_WEBHOOK_SECRET": "short", "AUTOMATION_SMTP_HOST": "smtp.example.test",
			"AUTOMATION_SMTP_SECURITY": "ssl", "AUTOMATION_WEBHOOK_IDEMPOTENT": "yes", "AUTOMATION_SMTP_USERNAME": "u"}[k]
	})
	for _, want := range []string{"AUTOMATION_WEBHOOK_SECRET", "AUTOMATION_SMTP_FROM", "AUTOMATION_SMTP_SECURITY", "AUTOMATION_WEBHOOK_IDEMPOTENT", "AUTOMATION_SMTP_USERNAME"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}

func TestReportSourcesFromConfig(t *testing.T) {
	t.Parallel()
	_, err := config.Load(func(k string) string {
		return map[string]string{"AUTOMATION_REPORT_SOURCES": "rostered-hours=http://10.0.0.5/report"}[k]
	})
	if err == nil || !strings.Contains(err.Error(), "AUTOMATION_REPORT_SOURCES") {
		t.Fatalf("plain http to a remote host must be refused: %v", err)
	}
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"AUTOMATION_REPORT_SOURCES": "rostered-hours=https://hr.example.test/reports/hours, payroll=http://127.0.0.1:9000/r",
			"AUTOMATION_DATA_DIR": t.TempDir()}[k]
	})
	if err != nil || len(cfg.ReportSources) != 2 || cfg.ReportSources["payroll"] != "http://127.0.0.1:9000/r" {
		t.Fatalf("%v %v", cfg.ReportSources, err)
	}
	rt, err := Open(context.Background(), cfg, Options{Clock: automation.NewManualClock(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, ok := rt.Reports.Renderers().Lookup("rostered-hours"); !ok {
		t.Fatal("configured report types are not registered")
	}
}

// AUTOMATION_FCM_CREDENTIALS turns the push channel on over the device registry; a key file
// that is not a service account, or no registry, refuses to start.
func TestPushChannelFromConfig(t *testing.T) {
	t.Parallel()
	sim, err := fcmsim.New(fcmsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"AUTOMATION_FCM_CREDENTIALS": string(sim.ServiceAccountJSON("http://127.0.0.1:1")), "AUTOMATION_FCM_ENDPOINT": "http://127.0.0.1:1"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	clk := automation.NewManualClock(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	var devices channel.PushDevices = noDevices{}
	chs, err := ChannelsFromConfig(cfg, nil, true, clk, devices)
	if err != nil || chs["push"] == nil {
		t.Fatalf("push: %v, %v", chs, err)
	}
	if _, err := ChannelsFromConfig(cfg, nil, true, clk, nil); err == nil {
		t.Fatal("a push channel without a device registry")
	}
	cfg.FCM.Credentials = `{"type":"authorized_user"}`
	if _, err := ChannelsFromConfig(cfg, nil, true, clk, devices); err == nil {
		t.Fatal("a key file that is not a service account was accepted")
	}
}

type noDevices struct{}

func (noDevices) PushDeviceList(context.Context, string, string) ([]store.PushDevice, error) {
	return nil, nil
}
func (noDevices) PushDeviceRetire(context.Context, store.PushDeviceRetireParams) (store.PushDevice, error) {
	return store.PushDevice{}, store.ErrNotFound
}

// AUTOMATION_ACS_CONNECTION_STRING (with AUTOMATION_SMS_FROM) turns the sms channel on; a
// connection string without a key refuses to start.
func TestSMSChannelFromConfig(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string) (config.Config, error) {
		return config.Load(func(k string) string { return env[k] })
	}
	cfg, err := load(map[string]string{"AUTOMATION_ACS_CONNECTION_STRING": "endpoint=https://contoso.communication.azure.com/;accesskey=pw==",
		"AUTOMATION_SMS_FROM": "+18005550100"})
	if err != nil {
		t.Fatal(err)
	}
	clk := automation.NewManualClock(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	chs, err := ChannelsFromConfig(cfg, nil, true, clk, nil)
	if err != nil || chs["sms"] == nil {
		t.Fatalf("sms: %v, %v", chs, err)
	}
	if err := chs["sms"].ValidateRecipient("0412 345 678"); err == nil {
		t.Fatal("the sms channel accepted a number that is not E.164")
	}
	if _, err := load(map[string]string{"AUTOMATION_ACS_CONNECTION_STRING": "endpoint=https://x/;accesskey=pw=="}); err == nil {
		t.Fatal("a connection string without AUTOMATION_SMS_FROM was accepted")
	}
	cfg.ACS.WhatsAppChannelID = "7c4f1e52-3a6b-4c8d-9e0f-1a2b3c4d5e6f"
	if chs, err := ChannelsFromConfig(cfg, nil, true, clk, nil); err != nil || chs["whatsapp"] == nil {
		t.Fatalf("whatsapp: %v %v", chs, err)
	}
	cfg.ACS.WhatsAppChannelID = "not-a-guid"
	if _, err := ChannelsFromConfig(cfg, nil, true, clk, nil); err == nil {
		t.Fatal("a channel registration id that is not a GUID was accepted")
	}
	cfg.ACS.WhatsAppChannelID = ""
	cfg.ACS.ConnectionString = "endpoint=https://contoso.communication.azure.com/"
	if _, err := ChannelsFromConfig(cfg, nil, true, clk, nil); err == nil {
		t.Fatal("a connection string without an access key was accepted")
	}
}
