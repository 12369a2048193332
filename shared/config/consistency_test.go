package config_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/config"
)

// TestSettingsAreDeclaredWhereTheyRun fails when a setting the code reads is missing from
// local.settings.sample.json or from the Bicep app settings, when one of those declares a
// setting the code does not read, or when code outside this package reads the environment.
func TestSettingsAreDeclaredWhereTheyRun(t *testing.T) {
	t.Parallel()
	var sample struct{ Values map[string]string }
	b, err := os.ReadFile("../../local.settings.sample.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sample); err != nil {
		t.Fatal(err)
	}
	bicep := ""
	files, _ := filepath.Glob("../../infra/*.bicep")
	mods, _ := filepath.Glob("../../infra/modules/*.bicep")
	for _, f := range append(files, mods...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bicep += string(b)
	}
	if bicep == "" {
		t.Fatal("no Bicep files found")
	}
	// App setting names as they appear in Bicep: name: 'X'.
	bicepNames := map[string]bool{}
	for _, m := range regexp.MustCompile(`name:\s*'([A-Za-z][A-Za-z0-9_]*)'`).FindAllStringSubmatch(bicep, -1) {
		bicepNames[m[1]] = true
	}
	read := map[string]bool{}
	for _, s := range config.Settings {
		read[s.Name] = true
		if s.Where&config.Local != 0 {
			if _, ok := sample.Values[s.Name]; !ok {
				t.Errorf("%s is read by the code but missing from local.settings.sample.json", s.Name)
			}
		}
		if s.Where&config.Azure != 0 && !bicepNames[s.Name] {
			t.Errorf("%s is read by the code but not set in infra Bicep app settings", s.Name)
		}
	}
	// The Functions host's own settings are allowed in both; ours must be read by the code.
	hostOwned := func(n string) bool {
		return strings.HasPrefix(n, "FUNCTIONS_") || strings.HasPrefix(n, "AzureWebJobs") || strings.HasPrefix(n, "ServiceBusConnection") ||
			strings.HasPrefix(n, "APPLICATIONINSIGHTS_") || strings.HasPrefix(n, "WEBSITE_")
	}
	for n := range sample.Values {
		if !read[n] && !hostOwned(n) {
			t.Errorf("local.settings.sample.json declares %s, which no code reads", n)
		}
	}
	for n := range bicepNames {
		if (strings.HasPrefix(n, "AUTOMATION_") || strings.HasSuffix(n, "Schedule")) && !read[n] {
			t.Errorf("Bicep sets %s, which no code reads", n)
		}
	}
	// Only this package reads the environment (docs/conventions.md#configuration).
	out, err := exec.Command("git", "-C", "../..", "grep", "-l", "-E", `os\.(Getenv|LookupEnv|Environ)\(`, "--", "*.go").Output()
	if err == nil {
		var offenders []string
		for _, f := range strings.Fields(string(out)) {
			if !strings.HasPrefix(f, "shared/config/") && !strings.HasSuffix(f, "_test.go") && f != "functions/main.go" {
				offenders = append(offenders, f)
			}
		}
		sort.Strings(offenders)
		if len(offenders) > 0 {
			t.Errorf("environment read outside shared/config and the binary's main: %v", offenders)
		}
	}
}
