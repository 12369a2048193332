package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/azure"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/logmask"
	"github.com/automation-platform/automation/shared/publish"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/replay"
	"github.com/automation-platform/automation/shared/store"
)

const usage = `usage: automation <command> [flags]

commands:
  (none)        with FUNCTIONS_CUSTOMHANDLER_PORT set: serve the Functions custom-handler protocol
  serve         run the pipeline locally: HTTP on 127.0.0.1, timers and in-process bus
  replay        replay a scenario file on a simulated clock (JSON lines on stdout)
  migrate       apply the SQL migrations of the configured store
  publish       send CloudEvents from a file to Service Bus (or -local to a serve)
  keys          API keys: create, list, revoke, rotate (docs/security.md#api-keys)
  sessions      console sessions: end a person's or a key's sessions at once (docs/security.md#sessions)
  support       the support API from a terminal: find, show, explain, release, retry, cancel, run-now, metrics
  templates     notification templates from a terminal: get, put (a new version), delete, preview (docs/channels.md)
  preferences   recipient preferences and quiet hours from a terminal: get, put, quiet-hours (docs/channels.md)
  provider-sim  run the simulated campaign action provider on 127.0.0.1:8088 (fault switches; docs/campaigns.md)
  billing-sim   run the simulated billing provider on 127.0.0.1:8089 (docs/billing.md), for demos
  fcm-sim       run the simulated Firebase Cloud Messaging on 127.0.0.1:8090 and write its service-account key file (docs/channels.md)
  acs-sim       run the simulated Azure Communication Services (SMS, WhatsApp) on 127.0.0.1:8091 and write its connection string (docs/channels.md)
  otlp-sim      run a local OTLP/HTTP trace receiver on 127.0.0.1:4318 that prints each span on a line (docs/observability.md)
  sim           deterministic fault simulation: seeded histories, injected crashes and faults, invariants
  emulator-config  the Service Bus emulator's Config.json from the topology (make test/azure, docker-compose.azure.yml)

Configuration comes from environment variables (see docs/configuration.md).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run executes one command and returns the process exit code: 0 ok, 1 runtime failure,
// 2 bad usage, configuration or input.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if getenv("FUNCTIONS_CUSTOMHANDLER_PORT") != "" {
			return serveCmd(ctx, nil, getenv, stdout, stderr, true)
		}
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "replay":
		return replayCmd(ctx, args[1:], stdout, stderr)
	case "serve":
		return serveCmd(ctx, args[1:], getenv, stdout, stderr, false)
	case "migrate":
		return migrateCmd(ctx, args[1:], getenv, stdout, stderr)
	case "publish":
		return publishCmd(ctx, args[1:], getenv, stdout, stderr)
	case "support":
		return supportCmd(ctx, args[1:], getenv, stdout, stderr)
	case "keys":
		return keysCmd(ctx, args[1:], getenv, stdout, stderr)
	case "sessions":
		return sessionsCmd(ctx, args[1:], getenv, stdout, stderr)
	case "templates":
		return templatesCmd(ctx, args[1:], getenv, stdout, stderr)
	case "preferences":
		return preferencesCmd(ctx, args[1:], getenv, stdout, stderr)
	case "provider-sim", "providersim": // providersim: the name before both simulators were named alike
		return providersimCmd(ctx, args[1:], stdout, stderr)
	case "billing-sim":
		return billingSimCmd(ctx, args[1:], stdout, stderr)
	case "fcm-sim":
		return fcmsimCmd(ctx, args[1:], stdout, stderr)
	case "acs-sim":
		return acssimCmd(ctx, args[1:], stdout, stderr)
	case "otlp-sim":
		return otlpsimCmd(ctx, args[1:], stdout, stderr)
	case "sim":
		return simCmd(ctx, args[1:], stdout, stderr)
	case "emulator-config":
		return emulatorConfigCmd(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "automation: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

func loadConfig(getenv func(string) string, stderr io.Writer) (config.Config, *slog.Logger, bool) {
	cfg, err := config.Load(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "automation: configuration:\n%v\n", err)
		return cfg, nil, false
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	// Personal data (e-mail addresses, phone numbers) is masked before any log line is written.
	return cfg, slog.New(logmask.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))), true
}

// serveCmd runs the custom-handler protocol (protocol=true: the Functions host drives
// timers and Service Bus) or the local runtime.
func serveCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, protocol bool) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.String("port", "", "port on 127.0.0.1 (default FUNCTIONS_CUSTOMHANDLER_PORT, else 7071)")
	dir := fs.String("functions", "", "function folders (default: ./functions when present, else .)")
	seed := fs.String("seed", "", "load the businessUnits, reminderSettings and templates of a scenario `file` that are not stored yet (the management API owns later changes)")
	token := fs.String("token", "", "require Authorization: Bearer `token` on every /api request (default AUTOMATION_API_TOKEN)")
	registry := fs.String("registry", "", "import the event registry `file` ({\"events\":[…]}): a new version of each changed definition (docs/gateway.md#registry-api)")
	units := fs.String("business-units", "", "business units the HTTP APIs show at most: comma-separated `ids` or * (default AUTOMATION_API_BUSINESS_UNITS)")
	demo := fs.Bool("demo", false, "seed bu-demo with two police checks expiring today: one reminder sent within a minute, one on support hold to release (data in .data/demo unless AUTOMATION_DATA_DIR is set)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "automation serve: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *demo {
		if protocol {
			fmt.Fprintln(stderr, "automation custom handler: -demo is for serve only")
			return 2
		}
		// The demo keeps to its own data directory, away from other local work.
		outer := getenv
		getenv = func(k string) string {
			if v := outer(k); v != "" || k != "AUTOMATION_DATA_DIR" {
				return v
			}
			return filepath.Join(".data", "demo")
		}
	}
	cfg, log, ok := loadConfig(getenv, stderr)
	if !ok {
		return 2
	}
	app.ApplyMemoryLimit(cfg, getenv)
	if set["token"] {
		if strings.TrimSpace(*token) == "" {
			fmt.Fprintln(stderr, "automation serve: -token must not be empty")
			return 2
		}
		cfg.APIToken = *token
	}
	if set["business-units"] {
		if strings.TrimSpace(*units) == "" {
			fmt.Fprintln(stderr, "automation serve: -business-units must list ids or be *")
			return 2
		}
		cfg.APIBusinessUnits = *units
	}
	p := *port
	if p == "" {
		p = cmpOr(cfg.CustomHandlerPort, "7071")
	}
	addr, err := funchost.Addr(p)
	if err != nil {
		fmt.Fprintf(stderr, "automation %s: port %q (-port or FUNCTIONS_CUSTOMHANDLER_PORT): %v\n", cmdName(protocol), p, err)
		return 2
	}
	opts := app.Options{Clock: automation.SystemClock{}, Log: log, LogOutput: stdout}
	if protocol {
		// The Functions host: listen at once, open the store in the background, never
		// migrate (app.ServeHandler); `automation migrate` is a deployment step.
		log.Info("serving", "addr", addr, "mode", cmdName(protocol), "store", storeName(cfg), "bus", busName(cfg),
			"apiToken", cfg.APIToken != "", "apiBusinessUnits", cfg.APIBusinessUnits)
		err := app.ServeHandler(ctx, addr, cfg, opts, app.HandlerOptions{
			Prepare: func(ctx context.Context, rt *app.Runtime) (func(), error) {
				return prepareRuntime(ctx, rt, cfg, *dir, *seed, *registry, false, log)
			},
		})
		if err != nil {
			fmt.Fprintf(stderr, "automation %s: %v\n", cmdName(protocol), err)
			return 1
		}
		log.Info("stopped")
		return 0
	}
	// serve listens on 127.0.0.1 only, like its open APIs: the console may run without a token.
	opts.ConsoleWithoutToken = true
	// Bind before anything is written: a port already taken fails here, before the store is
	// created, migrated or seeded.
	ln, err := funchost.Listen(addr)
	if err != nil {
		fmt.Fprintf(stderr, "automation %s: %v\n", cmdName(protocol), err)
		return 1
	}
	defer ln.Close()
	rt, err := app.Open(ctx, cfg, opts)
	if err != nil {
		fmt.Fprintf(stderr, "automation %s: %v\n", cmdName(protocol), err)
		return 1
	}
	defer rt.Close()
	if *demo {
		if err := runDemo(ctx, rt, log); err != nil {
			fmt.Fprintf(stderr, "automation serve -demo: %v\n", err)
			return 1
		}
	}
	stopHost, err := prepareRuntime(ctx, rt, cfg, *dir, *seed, *registry, true, log)
	if err != nil {
		fmt.Fprintf(stderr, "automation %s: %v\n", cmdName(protocol), err)
		return 2
	}
	log.Info("serving", "addr", addr, "mode", cmdName(protocol), "store", storeName(cfg), "bus", busName(cfg),
		"apiToken", cfg.APIToken != "", "apiBusinessUnits", cfg.APIBusinessUnits)
	err = funchost.Serve(ctx, addr, loopbackOnly(rt.ListenerHandler(protocol)), &funchost.ServeOptions{Listener: ln})
	stopHost()
	if err != nil {
		fmt.Fprintf(stderr, "automation %s: %v\n", cmdName(protocol), err)
		return 1
	}
	log.Info("stopped")
	return 0
}

// prepareRuntime seeds from a scenario file (when seed is set) and, on the in-process bus,
// wires the local host (timers too when timers is true; the Functions host drives them
// otherwise), re-dispatches unsent deliveries and runs the host until the returned stop
// func is called (stop waits for it). Errors name the step.
func prepareRuntime(ctx context.Context, rt *app.Runtime, cfg config.Config, dir, seed, registry string, timers bool, log *slog.Logger) (func(), error) {
	if registry != "" {
		raw, err := os.ReadFile(registry)
		if err != nil {
			return nil, fmt.Errorf("-registry: %w", err)
		}
		doc, err := gateway.ParseDocument(raw)
		if err != nil {
			return nil, fmt.Errorf("-registry %s: %w", registry, err)
		}
		res, err := rt.Registry.Import(ctx, doc, "serve -registry")
		if err != nil {
			return nil, fmt.Errorf("-registry %s: %w", registry, err)
		}
		log.Info("imported the event registry", "file", registry, "types", len(res))
	}
	if seed != "" {
		if err := seedFrom(ctx, rt, seed); err != nil {
			return nil, fmt.Errorf("-seed %s:\n%w", seed, err)
		}
		log.Info("seeded business units and reminder settings", "file", seed)
	}
	if rt.Memory == nil {
		// Service Bus: the Functions host delivers; this process publishes what it commits.
		return rt.StartPublisher(ctx, nil), nil
	}
	h, err := rt.LocalHost(app.FunctionsDir(dir), cfg, timers, log)
	if err != nil {
		return nil, err
	}
	n, err := rt.RedispatchUnsent(ctx)
	if err != nil {
		return nil, fmt.Errorf("re-dispatching unsent deliveries: %w", err)
	}
	if n > 0 {
		log.Info("re-dispatched unsent deliveries after a restart", "count", n)
	}
	if n, err := rt.CatchUpProjection(ctx); err != nil {
		return nil, fmt.Errorf("catching up the delivery projection: %w", err)
	} else if n > 0 {
		log.Info("delivery projection caught up after a restart", "facts", n)
	}
	// The local host stops before the store closes: stop cancels it, then waits for it.
	hostCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Run(hostCtx, 200*time.Millisecond) }()
	// The eager publisher wakes the host after each drain; it stops first.
	stopPublisher := rt.StartPublisher(ctx, h)
	return func() { stopPublisher(); cancel(); <-done }, nil
}

// seedFrom loads the business units, reminder settings and templates of a scenario file
// that are not stored yet: a restart with the same -seed file never undoes what was changed
// through the management API since (that API owns changes; -seed only bootstraps).
func seedFrom(ctx context.Context, rt *app.Runtime, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return seedScenario(ctx, rt, raw, filepath.Base(path))
}

// seedScenario is seedFrom on a scenario's bytes; name goes in the templates' CreatedBy.
func seedScenario(ctx context.Context, rt *app.Runtime, raw []byte, name string) error {
	sc, err := replay.Parse(raw)
	if err != nil {
		return err
	}
	for _, bu := range sc.BusinessUnits {
		// Insert only: a unit that exists (ErrConflict) keeps what the API made of it.
		rec := store.BusinessUnitRecord{BusinessUnit: store.BusinessUnit{ID: bu.ID, Name: bu.Name, TimeZoneID: bu.TimeZone},
			Version: 1, UpdatedOn: rt.Clock.Now().UTC()}
		if err := rt.Store.BusinessUnitInsert(ctx, rec); err != nil && !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	for _, set := range sc.Settings() {
		if _, err := rt.Store.ReminderSettingGet(ctx, set.Guid); err == nil {
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		rec, err := reminder.SettingRecord(set, 1, rt.Clock.Now())
		if err != nil {
			return err
		}
		if err := rt.Store.ReminderSettingUpsert(ctx, rec); err != nil {
			return err
		}
	}
	// Templates: a new version only when the content differs from the latest stored one,
	// so restarting with the same -seed file does not pile up versions.
	for _, t := range sc.ParsedTemplates() {
		cur, err := rt.Store.NotificationTemplateGet(ctx, t.Key, t.BusinessUnitID)
		if err == nil && cur.BusinessUnitID == t.BusinessUnitID && cur.Subject == t.Subject && cur.Text == t.Text && cur.HTML == t.HTML {
			continue
		}
		if _, err := rt.Templates.Save(ctx, store.NotificationTemplate{Key: t.Key, BusinessUnitID: t.BusinessUnitID, Subject: t.Subject,
			Text: t.Text, HTML: t.HTML, CreatedBy: "seed:" + name}, nil); err != nil {
			return fmt.Errorf("template %q: %w", t.Key, err)
		}
	}
	return nil
}

func cmdName(protocol bool) string {
	if protocol {
		return "custom handler"
	}
	return "serve"
}

func storeName(c config.Config) string {
	if c.UsesSQLServer() {
		return "sqlserver"
	}
	return "sqlite"
}

func busName(c config.Config) string {
	if c.UsesServiceBus() {
		return "servicebus"
	}
	return "in-process"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func migrateCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprint(stderr, "usage: automation migrate (configuration from the environment)\n")
		return 2
	}
	cfg, log, ok := loadConfig(getenv, stderr)
	if !ok {
		return 2
	}
	if err := app.Migrate(ctx, cfg); err != nil {
		fmt.Fprintf(stderr, "automation migrate: %v\n", err)
		return 1
	}
	log.Info("migrations applied", "store", storeName(cfg))
	fmt.Fprintf(stdout, "migrations applied (%s)\n", storeName(cfg))
	return 0
}

// publishCmd sends the events in a file: one CloudEvent object, an array of them, or one
// per line.
func publishCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	fs.SetOutput(stderr)
	localURL := fs.String("local", "", "base URL of a local `serve` (e.g. http://127.0.0.1:7071) instead of Service Bus")
	token := fs.String("token", "", "with -local: the serve's bearer `token` (default AUTOMATION_API_TOKEN)")
	raw, ok := parseFileArg(fs, args, "usage: automation publish [-local URL [-token T]] <events.json>\n", stderr)
	if !ok {
		return 2
	}
	evs, err := splitEvents(raw)
	if err != nil {
		fmt.Fprintf(stderr, "automation publish: %s: %v\n", fs.Arg(0), err)
		return 2
	}
	// send returns what became of one event: "processed" or "duplicate" (a serve processed
	// it, or found its source and id processed before: nothing done), or "sent" to Service Bus
	// (whose duplicate detection drops a re-sent id; the handler dedupes what gets through).
	send := func(ctx context.Context, ev []byte) (string, error) { return "", errors.New("no destination") }
	if *localURL != "" {
		if *token == "" {
			cfg, err := config.Load(getenv)
			if err != nil {
				fmt.Fprintf(stderr, "automation publish: configuration:\n%v\n", err)
				return 2
			}
			*token = cfg.APIToken
		}
		client := &http.Client{Timeout: 10 * time.Second}
		url := strings.TrimRight(*localURL, "/") + app.LocalEventsPath
		send = func(ctx context.Context, ev []byte) (string, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(ev))
			req.Header.Set("Content-Type", "application/cloudevents+json")
			if *token != "" {
				req.Header.Set("Authorization", "Bearer "+*token)
			}
			resp, err := client.Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			if resp.StatusCode/100 != 2 {
				return "", fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(body))
			}
			var ans struct {
				Status string `json:"status"`
			}
			if json.Unmarshal(body, &ans) != nil || (ans.Status != "processed" && ans.Status != "duplicate") {
				return "", fmt.Errorf("unexpected answer %s: %.200s", resp.Status, bytes.TrimSpace(body))
			}
			return ans.Status, nil
		}
	} else {
		cfg, _, ok := loadConfig(getenv, stderr)
		if !ok {
			return 2
		}
		if !cfg.UsesServiceBus() {
			fmt.Fprint(stderr, "automation publish: set AUTOMATION_SERVICEBUS_CONNECTION or AUTOMATION_SERVICEBUS_NAMESPACE, or use -local URL\n")
			return 2
		}
		opts := azure.ServiceBusOptions{ConnectionString: cfg.ServiceBusConnection, Namespace: cfg.ServiceBusNamespace}
		if cfg.ServiceBusNamespace != "" {
			cred, err := azure.NewCredential(cfg.AzureClientID)
			if err != nil {
				fmt.Fprintf(stderr, "automation publish: %v\n", err)
				return 1
			}
			opts.Credential = cred
		}
		pub, err := azure.NewServiceBusPublisher(opts)
		if err != nil {
			fmt.Fprintf(stderr, "automation publish: %v\n", err)
			return 2
		}
		defer pub.Close(context.Background())
		send = func(ctx context.Context, ev []byte) (string, error) {
			if _, err := publish.Event(ctx, pub, ev); err != nil {
				return "", err
			}
			return "sent to Service Bus", nil
		}
	}
	failed := 0
	for i, ev := range evs {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "interrupted: %d of %d events not sent\n", len(evs)-i, len(evs))
			return 1
		}
		what, err := send(ctx, ev)
		if err != nil {
			failed++
			fmt.Fprintf(stderr, "event %d: %v\n", i, err)
			continue
		}
		if what == "duplicate" {
			what = "duplicate (this source and id were processed before: nothing done)"
		}
		fmt.Fprintf(stdout, "event %d: %s\n", i, what)
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// splitEvents accepts one JSON object, a JSON array of objects, or JSON lines.
func splitEvents(raw []byte) ([][]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, errors.New("no events")
	}
	if raw[0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil {
			return nil, fmt.Errorf("not a JSON array of events: %v", err)
		}
		out := make([][]byte, len(arr))
		for i, a := range arr {
			out[i] = a
		}
		return out, nil
	}
	var out [][]byte
	dec := json.NewDecoder(bytes.NewReader(raw))
	for dec.More() {
		var m json.RawMessage
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("event %d: %v", len(out), err)
		}
		out = append(out, m)
	}
	return out, nil
}

func replayCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("db", "", "keep the run's SQLite database and trace in `DIR` (must be new or empty; default: a temporary directory, removed)")
	raw, ok := parseFileArg(fs, args, "usage: automation replay [-db DIR] <scenario.json>\n", stderr)
	if !ok {
		return 2
	}
	sc, err := replay.Parse(raw)
	if err != nil {
		fmt.Fprintf(stderr, "automation replay: %s:\n%v\n", fs.Arg(0), err)
		return 2
	}
	if _, err := replay.Run(ctx, sc, stdout, &replay.Options{Dir: *dir}); err != nil {
		if errors.Is(err, replay.ErrDirNotEmpty) {
			fmt.Fprintf(stderr, "automation replay: %v\n", err)
			return 2
		}
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "automation replay: interrupted")
			return 1
		}
		fmt.Fprintf(stderr, "automation replay: %v\n", err)
		return 1
	}
	return 0
}
