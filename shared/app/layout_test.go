package app_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layers is the module's architecture, bottom first: every package belongs to exactly one
// layer, and a package imports project packages of strictly lower layers only (arrows point
// down; nothing imports sideways or up; docs/conventions.md#import-direction explains why). TestImportArrowsPointDown derives the package list
// from `go list ./...`, so a new package fails the test until it is declared here.
//
//  0. vocabulary — no project imports: the domain types, error codes, intents and the
//     business-unit scope (automation), local time (localtime), log context and masking
//     (logctx, logmask), configuration (config), the trace contract (trace), the one
//     table of topics, queues and functions (topology), and OpenTelemetry's setup and
//     trace-context carriers (telemetry) with its in-process OTLP receiver for tests
//     (telemetry/otlptest), headless Chromium for the browser tests (browsertest), and
//     the log sink concurrent writers and a test share (logsink).
//  1. contracts — written in the vocabulary: the store the logic needs (store), strict JSON
//     rules under the APIs and CloudEvents (strictjson), the Functions custom-handler
//     protocol (funchost), the bus contract and its settlement of intents (bus), tracetest,
//     the SQL files' parity test (sql), the Service Bus emulator's configuration drawn
//     from the topology (azurestack), and the tests' helpers on the vocabulary
//     (automation/automationtest: coded errors' members, RFC 3339 instants).
//  2. engine and leaf adapters — the scheduler row engine (scheduler), parsed domain events
//     (events), the HTTP conventions (httpapi) and the adapters' OpenAPI checks
//     (httpapi/openapitest), the business units every domain works in (businessunit), the
//     scoped view of the bus's dead letters (deadletter), the overview's in-memory counts
//     persisted by the metrics sampler (metricscount), the
//     store and bus suites (storetest, bustest), SQL behind the store (sql/sqlstore), the
//     trace and bus adapters (trace/localtrace, azure, local).
//  3. delivery core and SQL dialects — outbox, dispatcher and channels' contract
//     (delivery); API keys (apikey), over the store and the HTTP roles; the dialects (sql/mssql, sql/sqlite); the domain apps' event publisher
//     (publish), over parsed events; the dead-letter routes (api/deadletterapi); the attribute engine (attribute), whose instruction
//     check and event-time bound the gateway runs at save and at ingest (one rule, not two
//     copies).
//  4. domains and channels — the trigger providers (reminder) and report subscriptions
//     (report), the event gateway (gateway), the real channels (delivery/channel) and their
//     suite (channeltest), the delivery HTTP adapter (api/deliveryapi), and the in-app inbox
//     channel with its broker and service (inbox); the tests' SQLite store opener
//     (sql/sqlite/sqlitetest).
//  5. services and adapters over the domains — support reads (support), settings, report,
//     event ingest, registry, inbox and attribute HTTP adapters (api/settingsapi, api/reportapi,
//     api/eventsapi, api/registryapi, api/inboxapi, api/attributeapi, api/keysapi), the Functions handlers (handler).
//  6. adapters over the services — the support HTTP API (api/supportapi) and the browser
//     console (api/console).
//  7. clients of the adapters — the support API's HTTP client and terminal rendering
//     (api/supportapi/supportclient), which speaks the adapter's request and answer types;
//     the bundle of every API's OpenAPI document (api/apidoc), which reads each adapter's.
//  8. composition root — app wires one runtime from the layers below.
//  9. runtimes built on the root — replay.
//  10. built on replay: the acceptance harness (acceptance: a running embedded app driven
//     over HTTP, seeded from a scenario file read with replay's parser) and the
//     deterministic fault simulation (sim).
//  11. the binary — functions (main: flags and wiring only) — and the deployment
//     artifacts' tests (infra: Bicep bounds, the deploy docs' commands) and the
//     documentation's reference check (docs).
//
// Besides the direction, two adapters are confined: only the composition root and what is
// built on it depend on a SQL dialect (sql/mssql, sql/sqlite), and only the Azure adapter
// (and the SQL Server driver's Entra ID auth in sql/mssql) imports the Azure SDK. A
// package that imports "testing" (the conformance suites storetest, bustest, tracetest and
// channeltest, the OpenAPI checks openapitest, the browser browsertest, the token signer
// oidctest, the function folders funchosttest, the rigs budgettest, campaigntest and
// sqlitetest, the simulators' starter simhttptest, the
// telemetry set-up telemetrytest) is imported by tests only, or by another such package (apptest's OpenAPI rig
// on openapitest).
var layers = [][]string{
	{"shared/automation", "shared/localtime", "shared/logctx", "shared/logmask", "shared/phonenumber", "shared/config", "shared/trace", "shared/topology", "shared/simhttp", "shared/simhttp/simhttptest",
		"shared/telemetry", "shared/telemetry/otlptest", "shared/browsertest", "shared/logsink", "shared/oidcauth/oidctest"},
	{"shared/store", "shared/quiethours", "shared/strictjson", "shared/funchost", "shared/bus", "shared/trace/tracetest", "sql", "shared/money", "shared/azurestack",
		"shared/automation/automationtest", "shared/telemetry/telemetrytest"},
	{"shared/bus/bustest", "shared/funchost/funchosttest", "shared/scheduler", "shared/metricscount", "shared/events", "shared/deadletter", "shared/httpapi", "shared/httpapi/openapitest", "shared/budget/billing", "shared/businessunit", "shared/store/storetest", "sql/sqlstore", "shared/trace/localtrace", "shared/azure", "shared/local"},
	{"shared/delivery", "shared/apikey", "shared/session", "shared/quota", "shared/oidcauth", "shared/recipienttoken", "sql/mssql", "sql/sqlite", "shared/publish", "shared/budget/billingsim", "shared/delivery/fcmsim", "shared/delivery/acssim", "shared/attribute", "shared/api/deadletterapi"},
	{"shared/reminder", "shared/preference", "shared/report", "shared/delivery/channel", "shared/delivery/channeltest", "shared/api/deliveryapi", "shared/gateway", "shared/inbox", "shared/campaign", "shared/campaign/providersim", "shared/budget", "sql/sqlite/sqlitetest"},
	{"shared/support", "shared/api/settingsapi", "shared/api/reportapi", "shared/handler", "shared/api/eventsapi", "shared/api/registryapi", "shared/api/inboxapi", "shared/api/deviceapi", "shared/api/preferenceapi", "shared/api/templateapi", "shared/api/attributeapi", "shared/api/campaignapi", "shared/api/budgetapi", "shared/campaignbudget", "shared/budget/budgettest", "shared/campaign/campaigntest", "shared/api/keysapi", "shared/api/sessionsapi"},
	{"shared/api/supportapi", "shared/api/console"},
	{"shared/api/supportapi/supportclient", "shared/api/apidoc"},
	{"shared/app"},
	{"shared/replay", "shared/app/apptest"},
	{"shared/acceptance", "shared/sim"},
	{"functions", "infra", "docs", "shared/benchtable"},
}

const module = "github.com/automation-platform/automation/"

// listed is one package as `go list -json` describes it.
type listed struct {
	ImportPath string
	Imports    []string // direct imports, without tests
	Deps       []string // every transitive dependency, without tests
}

// listPackages runs `go list -json ./...` in dir (the module root). Errors: go list's own
// failure with its standard error, an unreadable listing, or no packages at all.
func listPackages(dir string) ([]listed, error) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "./...")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go list ./... failed: %w\n%s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("go list ./... failed: %w", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, errors.New("go list ./... listed no packages")
	}
	return pkgs, nil
}

// layerOf indexes layers: package (module-relative) → layer number.
func layerOf(t *testing.T) map[string]int {
	t.Helper()
	at := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			if j, dup := at[p]; dup {
				t.Errorf("%s is declared in layers %d and %d", p, j, i)
			}
			at[p] = i
		}
	}
	return at
}

// TestImportArrowsPointDown checks every package of the module against layers (see its
// comment): each is declared, each imports only strictly lower layers, SQL dialects and the
// Azure SDK stay behind the composition root, and conformance suites are imported by tests
// only.
func TestImportArrowsPointDown(t *testing.T) {
	t.Parallel()
	// A layout that cannot be listed is not a layout that was checked: fail, never skip.
	pkgs, err := listPackages("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range checkLayout(pkgs, layerOf(t)) {
		t.Error(problem)
	}
	t.Logf("%d packages checked against %d layers", len(pkgs), len(layers))
}

// checkLayout returns every violation of the layout rules in pkgs, one sentence each;
// at maps a module-relative package to its layer.
func checkLayout(pkgs []listed, at map[string]int) []string {
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	suites := map[string]bool{}
	for _, p := range pkgs {
		if slices.Contains(p.Imports, "testing") {
			suites[strings.TrimPrefix(p.ImportPath, module)] = true
		}
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module)
		seen[rel] = true
		mine, declared := at[rel]
		if !declared {
			errorf("package %s has no layer: add it to `layers` in shared/app/layout_test.go, in the lowest layer above everything it imports", rel)
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			// A test-only package (apptest's OpenAPI rig) may build on another one: it
			// is itself imported by tests only, so the suite still reaches tests only.
			if suites[dep] && !suites[rel] {
				errorf("%s imports the conformance suite %s; only tests may", rel, dep)
			}
			theirs, ok := at[dep]
			if declared && ok && theirs >= mine {
				errorf("%s (layer %d) imports %s (layer %d): arrows must point down to a lower layer", rel, mine, dep, theirs)
			}
		}
		for _, d := range p.Deps {
			if strings.Contains(d, "azure-sdk-for-go") && !azureAllowed(rel) {
				errorf("%s imports the Azure SDK (%s); only shared/azure (and the SQL Server driver's Entra ID auth in sql/mssql) may", rel, d)
			}
			dep := strings.TrimPrefix(d, module)
			if (dep == "sql/mssql" || dep == "sql/sqlite") && strings.HasPrefix(rel, "shared/") && rel != "shared/app" && rel != "shared/app/apptest" && rel != "shared/replay" && rel != "shared/acceptance" && rel != "shared/sim" {
				errorf("%s depends on SQL dialect %s; only shared/app (and runtimes built on it) may", rel, dep)
			}
		}
	}
	for p := range at {
		if !seen[p] {
			errorf("layers declares %s, which `go list ./...` does not list: remove or rename it", p)
		}
	}
	slices.Sort(problems)
	return problems
}

// azureAllowed: the adapters, and whatever is built on the composition root.
func azureAllowed(rel string) bool {
	switch rel {
	case "shared/azure", "sql/mssql", "shared/app", "shared/app/apptest", "shared/replay", "shared/acceptance", "shared/sim", "functions":
		return true
	}
	return strings.HasPrefix(rel, "shared/handler")
}

// TestCheckLayoutFails proves each rule of checkLayout reports its violation.
func TestCheckLayoutFails(t *testing.T) {
	t.Parallel()
	at := map[string]int{"shared/automation": 0, "shared/store": 1, "shared/store/storetest": 2, "shared/delivery": 3, "shared/app": 8, "sql/sqlite": 3}
	pkg := func(rel string, imports ...string) listed {
		p := listed{ImportPath: module + rel}
		for _, i := range imports {
			if !strings.Contains(i, ".") && strings.Contains(i, "/") {
				i = module + i
			}
			p.Imports = append(p.Imports, i)
			p.Deps = append(p.Deps, i)
		}
		return p
	}
	good := []listed{pkg("shared/automation"), pkg("shared/store", "shared/automation"), pkg("shared/store/storetest", "shared/store", "testing"),
		pkg("shared/delivery", "shared/store"), pkg("shared/app", "shared/delivery", "sql/sqlite"), pkg("sql/sqlite", "shared/store")}
	if got := checkLayout(good, at); len(got) != 0 {
		t.Fatalf("a sound layout reported %q", got)
	}
	cases := []struct {
		name string
		edit func([]listed) []listed
		want string
	}{
		{"undeclared package", func(ps []listed) []listed { return append(ps, pkg("shared/newthing", "shared/automation")) },
			"package shared/newthing has no layer: add it to `layers` in shared/app/layout_test.go"},
		{"stale declaration", func(ps []listed) []listed { return ps[1:] }, "layers declares shared/automation, which `go list ./...` does not list"},
		{"arrow up", func(ps []listed) []listed { ps[1] = pkg("shared/store", "shared/delivery"); return ps },
			"shared/store (layer 1) imports shared/delivery (layer 3): arrows must point down"},
		{"arrow sideways", func(ps []listed) []listed { ps[3] = pkg("shared/delivery", "sql/sqlite"); return ps },
			"shared/delivery (layer 3) imports sql/sqlite (layer 3)"},
		{"dialect below the root", func(ps []listed) []listed { ps[3].Deps = append(ps[3].Deps, module+"sql/sqlite"); return ps },
			"shared/delivery depends on SQL dialect sql/sqlite"},
		{"Azure SDK outside the adapter", func(ps []listed) []listed {
			ps[3].Deps = append(ps[3].Deps, "github.com/Azure/azure-sdk-for-go/sdk/azcore")
			return ps
		}, "shared/delivery imports the Azure SDK"},
		{"suite imported by production code", func(ps []listed) []listed {
			ps[3] = pkg("shared/delivery", "shared/store/storetest")
			return ps
		}, "shared/delivery imports the conformance suite shared/store/storetest"},
	}
	for _, tc := range cases {
		got := checkLayout(tc.edit(slices.Clone(good)), at)
		if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, tc.want) }) {
			t.Errorf("%s: reported %q, want a problem containing %q", tc.name, got, tc.want)
		}
	}
}

// A listing that fails is an error carrying go's own message, which
// TestImportArrowsPointDown turns into a failure (never a skip).
func TestListPackagesFailureIsAnError(t *testing.T) {
	t.Parallel()
	pkgs, err := listPackages(t.TempDir()) // no go.mod: "pattern ./...: directory prefix . does not contain main module" or similar
	if err == nil || len(pkgs) != 0 {
		t.Fatalf("listing outside a module: %d packages, error %v; want an error", len(pkgs), err)
	}
	if !strings.Contains(err.Error(), "go list ./... failed") || !strings.Contains(err.Error(), "go") {
		t.Fatalf("error %q does not say what failed", err)
	}
}

// The host logs a warning for every reply with empty Outputs or a null ReturnValue (timer and
// Service Bus functions have no output bindings); host.json filters that category to Error
// (see funchost's respond). Parsing the file keeps the filter from being dropped silently.
func TestHostJSONFiltersReplyWarnings(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../host.json")
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Logging struct {
			LogLevel map[string]string `json:"logLevel"`
		} `json:"logging"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	const category = "Microsoft.Azure.WebJobs.Script.Workers.Http.DefaultHttpWorkerService"
	switch lvl := h.Logging.LogLevel[category]; lvl {
	case "Error", "Critical", "None":
	default:
		t.Fatalf("host.json logging.logLevel[%q] = %q, want Error (or higher) to drop the Outputs/ReturnValue warnings", category, lvl)
	}
	if h.Logging.LogLevel["default"] != "Information" {
		t.Fatalf("the default level changed: %v", h.Logging.LogLevel)
	}
}

// TestEveryPackageHasADocGo: each package of the module keeps its package comment in a
// doc.go (the team's layout rule: what the package does, its shapes, units and errors, and a
// stateful one's state machine), and that comment names the package as Go's documentation
// conventions ask: "Package <name> …", or "Command <name> …" for a main package.
func TestEveryPackageHasADocGo(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-f", "{{.Dir}} {{.Name}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		dir, name, _ := strings.Cut(line, " ")
		if problem := docGoProblem(dir, name); problem != "" {
			t.Error(problem)
		}
		n++
	}
	if n == 0 {
		t.Fatal("go list ./... listed no packages")
	}
}

// docGoProblem says what is wrong with dir's doc.go for package name, or "" when nothing is.
func docGoProblem(dir, name string) string {
	path := filepath.Join(dir, "doc.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return fmt.Sprintf("%s: no readable doc.go (%v): move the package comment there", dir, err)
	}
	doc := ""
	if f.Doc != nil {
		doc = f.Doc.Text()
	}
	want := "Package " + name + " "
	if name == "main" {
		want = "Command "
	}
	if !strings.HasPrefix(doc, want) {
		return fmt.Sprintf("%s: doc.go's package comment should begin %q, got %.60q", path, want, doc)
	}
	return ""
}

// The check fails where it should: no doc.go, a doc.go without a comment, a comment naming
// another package.
func TestDocGoProblemFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if docGoProblem(dir, "x") == "" {
		t.Fatal("a package without doc.go passed")
	}
	for body, ok := range map[string]bool{"package x\n": false, "// Package y does.\npackage x\n": false,
		"// Package x does.\npackage x\n": true} {
		if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := docGoProblem(dir, "x") == ""; got != ok {
			t.Fatalf("doc.go %q: passed = %v, want %v", body, got, ok)
		}
	}
}
