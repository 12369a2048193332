package azurestack_test

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/automation-platform/automation/shared/azurestack"
	"github.com/automation-platform/automation/shared/bus/bustest"
	"github.com/automation-platform/automation/shared/topology"
)

const root = "../../"

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(root + path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The committed Config.json is what the topology gives: a queue, topic or subscription added
// to shared/topology (or a session flag changed) fails here until the file is regenerated.
func TestCommittedEmulatorConfigMatchesTopology(t *testing.T) {
	t.Parallel()
	want, err := azurestack.MarshalEmulator()
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, azurestack.ConfigPath); got != string(want) {
		t.Fatalf("%s differs from the topology; regenerate it with\n\tgo run ./functions emulator-config -o %s\ngot:\n%s\nwant:\n%s",
			azurestack.ConfigPath, azurestack.ConfigPath, got, want)
	}
}

// The document holds every entity of the topology with its session setting, and the
// conformance suite's two queues under the names the suite uses.
func TestEmulatorHoldsTheTopology(t *testing.T) {
	t.Parallel()
	ns := azurestack.Emulator().UserConfig.Namespaces[0]
	var queues []string
	for _, q := range ns.Queues {
		queues = append(queues, q.Name)
		if q.Properties.RequiresSession {
			t.Errorf("queue %s: sessions", q.Name)
		}
	}
	if want := append(topology.Queues(), bustest.DestinationA, bustest.DestinationB); !slices.Equal(queues, want) {
		t.Errorf("queues %q, want %q", queues, want)
	}
	if !slices.Equal(azurestack.ConformanceQueues, []string{bustest.DestinationA, bustest.DestinationB}) {
		t.Errorf("ConformanceQueues %q are not the suite's destinations", azurestack.ConformanceQueues)
	}
	got := map[[2]string]bool{}
	for _, tp := range ns.Topics {
		for _, s := range tp.Subscriptions {
			got[[2]string{tp.Name, s.Name}] = s.Properties.RequiresSession
		}
	}
	subs := topology.Subscriptions()
	if len(got) != len(subs) {
		t.Errorf("%d subscriptions, the topology has %d", len(got), len(subs))
	}
	for _, s := range subs {
		if sessions, ok := got[[2]string{s.Topic, s.Name}]; !ok || sessions != s.Sessions {
			t.Errorf("subscription %s/%s: present %v, sessions %v, want sessions %v", s.Topic, s.Name, ok, sessions, s.Sessions)
		}
	}
}

// isoMinutes parses the "PTnH", "PTnM" and "PTnS" durations the document uses.
func isoMinutes(t *testing.T, s string) time.Duration {
	t.Helper()
	m := regexp.MustCompile(`^PT(\d+)([HMS])$`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("duration %q is not PTn[HMS]", s)
	}
	n, _ := strconv.Atoi(m[1])
	return time.Duration(n) * map[string]time.Duration{"H": time.Hour, "M": time.Minute, "S": time.Second}[m[2]]
}

// Within the emulator's schema (Config-schema.json of the installer repository): the one
// namespace name it accepts, at most 50 queues and topics, entity names of its pattern,
// durations and MaxDeliveryCount inside its bounds; the conformance queues as the suite
// needs them (duplicate detection, no sessions, MaxDeliveryCount above 3); and the
// deployed values where the emulator allows them (lock duration, MaxDeliveryCount).
func TestEmulatorConfigWithinTheEmulatorsLimits(t *testing.T) {
	t.Parallel()
	cfg := azurestack.Emulator()
	if len(cfg.UserConfig.Namespaces) != 1 || cfg.UserConfig.Namespaces[0].Name != "sbemulatorns" {
		t.Fatalf("namespaces %+v: the emulator takes exactly one, sbemulatorns", cfg.UserConfig.Namespaces)
	}
	ns := cfg.UserConfig.Namespaces[0]
	if n := len(ns.Queues) + len(ns.Topics); n > 50 {
		t.Errorf("%d queues and topics, the emulator takes 50", n)
	}
	name := regexp.MustCompile(`^[A-Za-z0-9]$|^[A-Za-z0-9][\w\-./]*[A-Za-z0-9]$`)
	between := func(what, v string, lo, hi time.Duration) {
		if d := isoMinutes(t, v); d < lo || d > hi {
			t.Errorf("%s %s outside %v..%v", what, v, lo, hi)
		}
	}
	for _, q := range ns.Queues {
		p := q.Properties
		if !name.MatchString(q.Name) || !p.RequiresDuplicateDetection || p.MaxDeliveryCount < 4 || p.MaxDeliveryCount > 10 {
			t.Errorf("queue %+v", q)
		}
		between(q.Name+" TTL", p.DefaultMessageTimeToLive, 5*time.Minute, time.Hour)
		between(q.Name+" duplicate window", p.DuplicateDetectionHistoryTimeWindow, 5*time.Second, 5*time.Minute)
		between(q.Name+" lock", p.LockDuration, 5*time.Second, 5*time.Minute)
		if slices.Contains(topology.Queues(), q.Name) && isoMinutes(t, p.LockDuration) != topology.LockDuration {
			t.Errorf("queue %s lock %s, deployed %v", q.Name, p.LockDuration, topology.LockDuration)
		}
	}
	for _, tp := range ns.Topics {
		if !name.MatchString(tp.Name) || !tp.Properties.RequiresDuplicateDetection || len(tp.Subscriptions) == 0 || len(tp.Subscriptions) > 50 {
			t.Errorf("topic %+v", tp)
		}
		between(tp.Name+" duplicate window", tp.Properties.DuplicateDetectionHistoryTimeWindow, 5*time.Second, 5*time.Minute)
		for _, s := range tp.Subscriptions {
			p := s.Properties
			if !name.MatchString(s.Name) || p.MaxDeliveryCount != azurestack.MaxDeliveryCount {
				t.Errorf("subscription %s/%+v", tp.Name, s)
			}
			between(tp.Name+"/"+s.Name+" lock", p.LockDuration, time.Minute, 5*time.Minute)
			if isoMinutes(t, p.LockDuration) != topology.LockDuration {
				t.Errorf("subscription %s/%s lock %s, deployed %v", tp.Name, s.Name, p.LockDuration, topology.LockDuration)
			}
		}
	}
	var doc map[string]any
	b, _ := azurestack.MarshalEmulator()
	if err := json.Unmarshal(b, &doc); err != nil || !bytes.HasSuffix(b, []byte("}\n")) {
		t.Fatalf("not one JSON document with a final newline: %v", err)
	}
	bicep := read(t, "infra/modules/servicebus.bicep")
	if !strings.Contains(bicep, "param maxDeliveryCount int = "+strconv.Itoa(azurestack.MaxDeliveryCount)+"\n") {
		t.Errorf("servicebus.bicep's maxDeliveryCount is not %d", azurestack.MaxDeliveryCount)
	}
}

// The compose file mounts the committed Config.json where the emulator reads it, gives the
// emulator the SQL Server it needs (same sa password, the EULA), and publishes the ports the
// suites use on 127.0.0.1; `make test/azure` runs the script that drives it.
func TestComposeAndMakeTarget(t *testing.T) {
	t.Parallel()
	compose := read(t, "docker-compose.azure.yml")
	for _, want := range []string{
		"image: mcr.microsoft.com/mssql/server:2022-latest",
		"image: mcr.microsoft.com/azure-messaging/servicebus-emulator:",
		"image: mcr.microsoft.com/azure-storage/azurite:",
		`"./` + azurestack.ConfigPath + `:/ServiceBus_Emulator/ConfigFiles/Config.json:ro"`,
		"SQL_SERVER: sqlserver",
		"condition: service_healthy",
		`"127.0.0.1:1433:1433"`, `"127.0.0.1:5672:5672"`, `"127.0.0.1:5300:5300"`, `"127.0.0.1:10000:10000"`, `"127.0.0.1:10002:10002"`,
	} {
		if !strings.Contains(compose, want) {
			t.Errorf("docker-compose.azure.yml lacks %q", want)
		}
	}
	if n := strings.Count(compose, `MSSQL_SA_PASSWORD: "${MSSQL_SA_PASSWORD:-Automation_Test_2022}"`); n != 2 {
		t.Errorf("SQL Server and the emulator must share the sa password (%d of 2)", n)
	}
	if n := strings.Count(compose, `ACCEPT_EULA: "${ACCEPT_EULA:?`); n != 2 {
		t.Errorf("both licensed images need ACCEPT_EULA (%d of 2)", n)
	}
	mk := read(t, "Makefile")
	if !regexp.MustCompile(`(?m)^test/azure:.*##`).MatchString(mk) || !strings.Contains(mk, "bash scripts/azure-stack.sh") {
		t.Error("Makefile: no documented test/azure target running scripts/azure-stack.sh")
	}
	sh := read(t, "scripts/azure-stack.sh")
	for _, want := range []string{"docker compose -f docker-compose.azure.yml", "run ./functions migrate",
		"AUTOMATION_SQLSERVER_DSN=", "AUTOMATION_SERVICEBUS_CONNECTION=", "AZURITE_CONNECTION=", "./sql/mssql/ ./shared/azure/"} {
		if !strings.Contains(sh, want) {
			t.Errorf("scripts/azure-stack.sh lacks %q", want)
		}
	}
	wf := read(t, ".github/workflows/azure-stack.yml")
	if !strings.Contains(wf, "run: make test/azure") || !regexp.MustCompile(`(?m)^on:\n  push:`).MatchString(wf) {
		t.Error(".github/workflows/azure-stack.yml does not run make test/azure on every push")
	}
}

// The DSNs the script gives the SQL Server suite and `automation migrate` parse with
// go-mssqldb's own parser into the container's login, on 127.0.0.1:1433, without TLS.
func TestStackDSNParses(t *testing.T) {
	t.Parallel()
	sh := read(t, "scripts/azure-stack.sh")
	m := regexp.MustCompile(`sql_dsn\(\) \{ printf '([^']+)' "\$MSSQL_SA_PASSWORD" "\$1"; \}`).FindStringSubmatch(sh)
	if m == nil {
		t.Fatal("scripts/azure-stack.sh: no sql_dsn printf")
	}
	pw := regexp.MustCompile(`MSSQL_SA_PASSWORD="\$\{MSSQL_SA_PASSWORD:-([^}]+)\}"`).FindStringSubmatch(sh)
	if pw == nil || !strings.Contains(read(t, "docker-compose.azure.yml"), "${MSSQL_SA_PASSWORD:-"+pw[1]+"}") {
		t.Fatal("the script's default sa password is not the compose file's")
	}
	for _, db := range []string{"master", "automation"} {
		dsn := strings.Replace(strings.Replace(m[1], "%s", pw[1], 1), "%s", db, 1)
		c, err := msdsn.Parse(dsn)
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if c.Host != "127.0.0.1" || c.Port != 1433 || c.Database != db || c.User != "sa" || c.Password != pw[1] || c.Encryption != msdsn.EncryptionDisabled {
			t.Errorf("%s parsed as host %q port %d database %q user %q encryption %d", dsn, c.Host, c.Port, c.Database, c.User, c.Encryption)
		}
	}
}

// Each real-server test says, when it skips, which variable it needs and names
// `make test/azure`, which sets it.
func TestSkipMessagesNameTheVariable(t *testing.T) {
	t.Parallel()
	for file, want := range map[string][]string{
		"sql/mssql/mssql_test.go":         {"AUTOMATION_SQLSERVER_DSN", "make test/azure"},
		"shared/azure/servicebus_test.go": {"AUTOMATION_SERVICEBUS_CONNECTION", "make test/azure"},
		"shared/azure/trace_test.go":      {"AZURITE_CONNECTION", "make test/azure"},
	} {
		src := read(t, file)
		i := strings.Index(src, "t.Skip(")
		if i < 0 {
			t.Errorf("%s: no t.Skip", file)
			continue
		}
		end := strings.Index(src[i:], ")\n")
		msg := src[i : i+end]
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: the skip message %s does not name %q", file, msg, w)
			}
		}
	}
}
