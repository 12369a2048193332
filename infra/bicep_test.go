// Package infra_test checks what can be checked here of the Bicep and the deployment
// docs (nothing can be deployed or compiled with the bicep CLI on the development
// machines): parameter bounds read from the files, the values the .bicepparam files pass,
// the traffic profiles against the local timer reader, the roles, and that the commands in
// infra/README.md and docs/deploy.md name make targets and files the build produces.
package infra_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/local"
)

// bicepParam is one `param` declaration with the bounds its decorators set.
type bicepParam struct {
	Name     string
	Type     string
	Min, Max *int64
	Allowed  []string // literal values as written: 'x' → x, 40 → 40
}

var (
	paramRE    = regexp.MustCompile(`^param\s+([A-Za-z_][A-Za-z0-9_]*)\s+([A-Za-z]+)`)
	minValueRE = regexp.MustCompile(`^@minValue\((-?[0-9]+)\)`)
	maxValueRE = regexp.MustCompile(`^@maxValue\((-?[0-9]+)\)`)
)

// readBicepParams reads the params of a .bicep file with the @minValue, @maxValue and
// @allowed decorators written on the lines just before each (a small reader of the subset
// of Bicep this repository uses: one decorator per line, @allowed as a multi-line list).
func readBicepParams(t *testing.T, path string) map[string]bicepParam {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bicepParam{}
	var cur bicepParam
	inAllowed := false
	for _, line := range strings.Split(string(raw), "\n") {
		l := strings.TrimSpace(line)
		switch {
		case inAllowed:
			if l == "])" {
				inAllowed = false
				continue
			}
			cur.Allowed = append(cur.Allowed, strings.Trim(l, "'"))
		case strings.HasPrefix(l, "@allowed(["):
			inAllowed = true
		case minValueRE.MatchString(l):
			v, _ := strconv.ParseInt(minValueRE.FindStringSubmatch(l)[1], 10, 64)
			cur.Min = &v
		case maxValueRE.MatchString(l):
			v, _ := strconv.ParseInt(maxValueRE.FindStringSubmatch(l)[1], 10, 64)
			cur.Max = &v
		case paramRE.MatchString(l):
			m := paramRE.FindStringSubmatch(l)
			cur.Name, cur.Type = m[1], m[2]
			out[cur.Name] = cur
			cur = bicepParam{}
		case l == "" || strings.HasPrefix(l, "//"):
		case strings.HasPrefix(l, "@"):
			// @description, @secure, @minLength ... : not bounds of a value checked here
		default:
			cur = bicepParam{} // decorators belong to the next param only
		}
	}
	return out
}

// bicepparamValues reads `param name = literal` lines of a .bicepparam file: integers and
// single-quoted strings; other expressions (readEnvironmentVariable, objects) are skipped.
func bicepparamValues(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^param\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(-?[0-9]+|'[^']*'|true|false)\s*(//.*)?$`)
	out := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if m := re.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			out[m[1]] = strings.Trim(m[2], "'")
		}
	}
	return out
}

func TestMaximumInstanceCountIsAtLeastFlexMinimum(t *testing.T) {
	t.Parallel()
	// Flex Consumption's lowest maximumInstanceCount is 40.
	for _, f := range []string{"main.bicep", "modules/functionapp.bicep"} {
		p, ok := readBicepParams(t, f)["maximumInstanceCount"]
		if !ok || p.Min == nil || *p.Min != 40 || p.Max == nil || *p.Max != 1000 {
			t.Errorf("%s: maximumInstanceCount bounds %+v, want @minValue(40) @maxValue(1000)", f, p)
		}
	}
}

// The reader itself: a decorator it cannot see would make the bounds test vacuous.
func TestBicepReaderReadsDecorators(t *testing.T) {
	t.Parallel()
	ps := readBicepParams(t, "main.bicep")
	if p := ps["planKind"]; !slices.Equal(p.Allowed, []string{"FlexConsumption", "ElasticPremium"}) {
		t.Fatalf("planKind allowed: %v", p.Allowed)
	}
	if p := ps["trafficProfile"]; !slices.Equal(p.Allowed, []string{"standard", "low"}) {
		t.Fatalf("trafficProfile allowed: %v", p.Allowed)
	}
	if p := ps["environmentName"]; p.Min != nil || p.Allowed != nil {
		t.Fatalf("environmentName has no value bounds: %+v", p)
	}
	if len(ps) < 20 {
		t.Fatalf("only %d params read", len(ps))
	}
}

// Every value a parameters file passes lies within main.bicep's bounds (what `az deployment`
// would reject only at deploy time).
func TestParameterFilesAreWithinBounds(t *testing.T) {
	t.Parallel()
	params := readBicepParams(t, "main.bicep")
	files, _ := filepath.Glob("parameters/*.bicepparam")
	if len(files) == 0 {
		t.Fatal("no parameter files")
	}
	for _, f := range files {
		vals := bicepparamValues(t, f)
		if len(vals) == 0 {
			t.Fatalf("%s: no literal values read", f)
		}
		for name, v := range vals {
			p, ok := params[name]
			if !ok {
				t.Errorf("%s: param %s is not declared in main.bicep", f, name)
				continue
			}
			if p.Allowed != nil && !slices.Contains(p.Allowed, v) {
				t.Errorf("%s: %s = %q, allowed %v", f, name, v, p.Allowed)
			}
			if p.Min != nil || p.Max != nil {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Errorf("%s: %s = %q is not a number", f, name, v)
					continue
				}
				if (p.Min != nil && n < *p.Min) || (p.Max != nil && n > *p.Max) {
					t.Errorf("%s: %s = %d outside [%v, %v]", f, name, n, deref(p.Min), deref(p.Max))
				}
			}
		}
	}
}

func deref(p *int64) any {
	if p == nil {
		return "-"
	}
	return *p
}

// trafficProfiles reads the schedule table of functionapp.bicep: profile → setting → value.
func trafficProfiles(t *testing.T) map[string]map[string]string {
	t.Helper()
	raw, err := os.ReadFile("modules/functionapp.bicep")
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	i := strings.Index(s, "var trafficProfiles = {")
	if i < 0 {
		t.Fatal("functionapp.bicep: no trafficProfiles table")
	}
	out := map[string]map[string]string{}
	cur := ""
	for _, line := range strings.Split(s[i:], "\n")[1:] {
		l := strings.TrimSpace(line)
		if l == "}" && cur == "" {
			break
		}
		switch {
		case strings.HasSuffix(l, ": {"):
			cur = strings.TrimSuffix(l, ": {")
			out[cur] = map[string]string{}
		case l == "}":
			cur = ""
		case cur != "":
			k, v, _ := strings.Cut(l, ":")
			out[cur][strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), "'")
		}
	}
	return out
}

// Both traffic profiles give schedules the Functions host and the local timer reader agree
// on: function.json's %DueWorkSchedule% etc. resolve through shared/config and parse with
// the local host's NCRONTAB reader; the low profile fires less often, and turns on the relay
// after each poll so the longer relay timer is only a safety net.
func TestTrafficProfiles(t *testing.T) {
	t.Parallel()
	profiles := trafficProfiles(t)
	allowed := readBicepParams(t, "modules/functionapp.bicep")["trafficProfile"].Allowed
	if len(profiles) != 2 || len(allowed) != 2 {
		t.Fatalf("profiles %v, allowed %v", profiles, allowed)
	}
	for _, name := range allowed {
		if profiles[name] == nil {
			t.Fatalf("profile %s allowed but not defined", name)
		}
	}
	at := time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC)
	interval := map[string]map[string]time.Duration{}
	for name, p := range profiles {
		cfg, err := config.Load(func(k string) string {
			switch k {
			case "DueWorkSchedule":
				return p["dueWorkSchedule"]
			case "OutboxRelaySchedule":
				return p["outboxRelaySchedule"]
			case "ReconciliationSchedule":
				return p["reconciliationSchedule"]
			case "AUTOMATION_RELAY_AFTER_POLL":
				return p["relayAfterPoll"]
			}
			return ""
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cfg.RelayAfterPoll != (name == "low") {
			t.Errorf("%s: relay after poll = %v", name, cfg.RelayAfterPoll)
		}
		interval[name] = map[string]time.Duration{}
		for _, setting := range []string{"DueWorkSchedule", "OutboxRelaySchedule", "ReconciliationSchedule"} {
			expr, err := funchost.ResolveSetting("%"+setting+"%", cfg.Lookup) // as in function.json
			if err != nil {
				t.Fatalf("%s %s: %v", name, setting, err)
			}
			s, err := local.ParseSchedule(expr)
			if err != nil {
				t.Fatalf("%s %s %q: %v", name, setting, expr, err)
			}
			first := s.Next(at)
			interval[name][setting] = s.Next(first).Sub(first)
		}
	}
	std, low := interval["standard"], interval["low"]
	if std["DueWorkSchedule"] != 30*time.Second || std["OutboxRelaySchedule"] != 10*time.Second || std["ReconciliationSchedule"] != 15*time.Minute {
		t.Errorf("standard intervals %v", std)
	}
	if low["DueWorkSchedule"] != 5*time.Minute || low["OutboxRelaySchedule"] != 5*time.Minute || low["ReconciliationSchedule"] != time.Hour {
		t.Errorf("low intervals %v", low)
	}
	for _, f := range []string{"../functions/DueWorkPoller/function.json", "../functions/OutboxRelay/function.json", "../functions/Reconciliation/function.json"} {
		raw, err := os.ReadFile(f)
		if err != nil || !regexp.MustCompile(`"schedule":\s*"%[A-Za-z]+Schedule%"`).Match(raw) {
			t.Errorf("%s: the schedule must be an app-setting expression so the profile applies (%v)", f, err)
		}
	}
}

// The roles: Key Vault Secrets User on the vault the references name; Azure Service Bus Data
// Owner for the scaler (its runtime-properties read needs the data-plane Manage right, which
// no control-plane read action grants, so no custom "reader" role may come back), and
// Azure Service Bus Data Sender for the operator who runs the smoke check, each conditional
// and passed through from main.bicep.
func TestRoles(t *testing.T) {
	t.Parallel()
	roles, err := os.ReadFile("modules/roles.bicep")
	if err != nil {
		t.Fatal(err)
	}
	app, err := os.ReadFile("modules/functionapp.bicep")
	if err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile("main.bicep")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"keyVaultSecretsUser: '4633458b-17de-408a-b874-0445c86b69e6'",
		"resource keyVaultSecretsUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(keyVaultName))",
		"scope: keyVault",
		// Azure built-in roles: Azure Service Bus Data Owner.
		"serviceBusDataOwner: '090c5cfd-751d-490a-894a-3ce6f1109419'",
		"resource sbDataOwner 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (grantServiceBusDataOwner)",
		"roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.serviceBusDataOwner)",
		"resource operatorSbSender 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(operatorPrincipalId))",
		"roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.serviceBusDataSender)\n    principalId: operatorPrincipalId",
	} {
		if !strings.Contains(string(roles), want) {
			t.Errorf("roles.bicep lacks %q", want)
		}
	}
	for _, gone := range []string{"Microsoft.Authorization/roleDefinitions@", "ScaleReader", "scale-reader"} {
		if strings.Contains(string(roles), gone) || strings.Contains(string(main), gone) {
			t.Errorf("the custom scale-reader role is back (%q): control-plane reads cannot give the scaler the Manage right", gone)
		}
	}
	if !regexp.MustCompile(`keyVaultReferenceIdentity:\s*identityId`).Match(app) {
		t.Error("functionapp.bicep: keyVaultReferenceIdentity must be the user-assigned identity")
	}
	for _, want := range []string{"keyVaultName: keyVaultName", "grantServiceBusDataOwner: grantServiceBusDataOwner",
		"operatorPrincipalId: operatorPrincipalId", "operatorPrincipalType: operatorPrincipalType"} {
		if !strings.Contains(string(main), want) {
			t.Errorf("main.bicep does not pass %q to roles", want)
		}
	}
}
