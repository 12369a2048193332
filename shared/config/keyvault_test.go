package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/config"
)

// An unresolved Key Vault reference left as a setting's value is refused at start-up with
// an error naming the setting and never showing the value - for every secret setting, in
// every spelling the platform leaves behind.
func TestUnresolvedKeyVaultReferenceIsRefused(t *testing.T) {
	t.Parallel()
	refs := []string{
		"@Microsoft.KeyVault(SecretUri=https://kv-automation.vault.azure.net/secrets/webhook-secret/)",
		"@Microsoft.KeyVault(VaultName=kv-automation;SecretName=webhook-secret)",
		"  @microsoft.keyvault(SecretUri=https://kv-automation.vault.azure.net/secrets/s/0123456789abcdef)\n",
		"@MICROSOFT.KEYVAULT(SecretUri=https://kv-automation.vault.azure.net/secrets/s)",
	}
	// Values under which each secret setting is otherwise valid, so the refusal is the only error.
	companions := map[string]map[string]string{
		"AUTOMATION_SMTP_PASSWORD": {"AUTOMATION_SMTP_USERNAME": "user"},
	}
	for _, name := range config.SecretSettings {
		for _, ref := range refs {
			m := map[string]string{name: ref}
			for k, v := range companions[name] {
				m[k] = v
			}
			_, err := config.Load(env(m))
			if err == nil {
				t.Errorf("%s=%q accepted", name, ref)
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, name+": is an unresolved Key Vault reference") {
				t.Errorf("%s: error does not name the setting: %v", name, err)
			}
			if strings.Contains(msg, "vault.azure.net") || strings.Contains(msg, "SecretName") {
				t.Errorf("%s: error shows the value: %v", name, err)
			}
			if n := strings.Count(msg, "\n") + 1; n != 1 && name != "AUTOMATION_SMTP_PASSWORD" {
				t.Errorf("%s: want the refusal only, got %d errors: %v", name, n, err)
			}
		}
	}
	// Every setting, not only the secrets, is refused when it holds one.
	for _, s := range config.Settings {
		if _, err := config.Load(env(map[string]string{s.Name: refs[0]})); err == nil || !strings.Contains(err.Error(), s.Name+": is an unresolved") {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
	// Each secret setting is one config reads.
	for _, name := range config.SecretSettings {
		if !slices.ContainsFunc(config.Settings, func(s config.Setting) bool { return s.Name == name }) {
			t.Errorf("secret %s is not a declared setting", name)
		}
	}
}

func TestResolvedSecretsAreAccepted(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"a-resolved-secret-of-32-bytes-xx", "x@Microsoft.KeyVault(not-a-prefix)", "Microsoft.KeyVault(SecretUri=x)-without-at"} {
		c, err := config.Load(env(map[string]string{"AUTOMATION_WEBHOOK_SECRET": v}))
		if err != nil || c.Webhook.Secret != v {
			t.Errorf("%q refused: %v", v, err)
		}
	}
	if !config.IsUnresolvedKeyVaultReference(" \t@microsoft.KeyVault(") || config.IsUnresolvedKeyVaultReference("") {
		t.Fatal("prefix rule")
	}
}

func TestRelayAfterPoll(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{"AUTOMATION_RELAY_AFTER_POLL": "true"}))
	if err != nil || !c.RelayAfterPoll {
		t.Fatalf("%v %v", c.RelayAfterPoll, err)
	}
	if _, err := config.Load(env(map[string]string{"AUTOMATION_RELAY_AFTER_POLL": "maybe"})); err == nil || !strings.Contains(err.Error(), "AUTOMATION_RELAY_AFTER_POLL") {
		t.Fatalf("%v", err)
	}
}
