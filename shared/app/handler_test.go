package app_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/logsink"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// hostStartLimit is the Functions host's limit for a custom handler to answer its first
// request, on every plan (HttpWorkerOptions.InitializationTimeout in the host's source). The
// handler must answer well inside it.
const hostStartLimit = 30 * time.Second

// firstAnswerBound is what the tests allow: a tenth of the host's limit.
const firstAnswerBound = hostStartLimit / 10

// handlerUnderTest runs ServeHandler on 127.0.0.1:0 and returns its base URL, the log and
// a func that stops it and returns ServeHandler's error.
func handlerUnderTest(t *testing.T, cfg config.Config, o app.Options, h app.HandlerOptions) (string, *logsink.Buffer, <-chan error, context.CancelFunc) {
	t.Helper()
	logs := &logsink.Buffer{}
	o.Clock = automation.SystemClock{}
	o.Log = slog.New(slog.NewJSONHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	h.Serve = &funchost.ServeOptions{Ready: func(a net.Addr) { addrc <- a }}
	done := make(chan error, 1)
	go func() { done <- app.ServeHandler(ctx, "127.0.0.1:0", cfg, o, h) }()
	select {
	case a := <-addrc:
		t.Cleanup(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Error("ServeHandler did not stop")
			}
		})
		return "http://" + a.String(), logs, done, cancel
	case err := <-done:
		t.Fatalf("ServeHandler returned before listening: %v", err)
	case <-time.After(firstAnswerBound):
		t.Fatalf("the listener did not open within %v", firstAnswerBound)
	}
	cancel()
	return "", nil, nil, nil
}

func call(t *testing.T, method, url, body string) (int, map[string]any, time.Duration) {
	t.Helper()
	start := time.Now()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := (&http.Client{Timeout: hostStartLimit}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if ct := res.Header.Get("Content-Type"); !strings.Contains(ct, "json") {
		t.Errorf("%s %s: Content-Type %q, the host needs JSON", method, url, ct)
	}
	return res.StatusCode, m, time.Since(start)
}

const timerInvocation = `{"Data":{"timer":{"IsPastDue":false,"ScheduleStatus":null}},"Metadata":{}}`

func handlerConfig(t *testing.T) config.Config {
	t.Helper()
	cfg, err := config.Load(func(k string) string {
		if k == "AUTOMATION_DATA_DIR" {
			return t.TempDir()
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A database that is slow or unreachable must not keep the handler from answering: the
// listener opens first, GET / answers 503 at once, an invocation answers a retryable 503
// after the bounded wait - all well within the host's start limit - and once the store
// opens the same requests succeed.
func TestHandlerAnswersBeforeTheStoreOpens(t *testing.T) {
	t.Parallel()
	cfg := handlerConfig(t)
	release := make(chan struct{})
	var sawSkip bool
	var mu sync.Mutex
	opener := func(ctx context.Context, c config.Config, skip bool) (store.Store, error) {
		mu.Lock()
		sawSkip = skip
		mu.Unlock()
		select { // an unreachable server: nothing happens until released (or the attempt times out)
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		st, err := sqlite.Open(ctx, filepath.Join(c.DataDir, "automation.db"), nil)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	started := time.Now()
	base, logs, done, _ := handlerUnderTest(t, cfg, app.Options{OpenStore: opener},
		app.HandlerOptions{InvocationWait: 300 * time.Millisecond, OpenTimeout: time.Hour})

	code, body, _ := call(t, http.MethodGet, base+"/", "")
	if first := time.Since(started); code != http.StatusServiceUnavailable || body["status"] != "starting" || first > firstAnswerBound {
		t.Fatalf("readiness before the store opened: %d %v after %v (bound %v)", code, body, first, firstAnswerBound)
	}
	code, body, took := call(t, http.MethodPost, base+"/DueWorkPoller", timerInvocation)
	if code != http.StatusServiceUnavailable || !strings.Contains(body["error"].(string), "retry") || took > firstAnswerBound {
		t.Fatalf("invocation before the store opened: %d %v after %v", code, body, took)
	}
	code, _, _ = call(t, http.MethodGet, base+"/api/support/metrics", "")
	if code != http.StatusServiceUnavailable {
		t.Fatalf("forwarded HTTP before the store opened: %d", code)
	}
	select {
	case err := <-done:
		t.Fatalf("the handler exited while the store was unreachable: %v", err)
	default:
	}

	// An invocation already waiting is served as soon as the store opens.
	waiting := make(chan int, 1)
	go func() {
		c, _, _ := call(t, http.MethodPost, base+"/DueWorkPoller", timerInvocation)
		waiting <- c
	}()
	time.Sleep(50 * time.Millisecond)
	close(release)
	deadline := time.Now().Add(firstAnswerBound)
	for {
		code, _, _ = call(t, http.MethodGet, base+"/", "")
		if code == http.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code != http.StatusOK {
		t.Fatalf("readiness after the store opened: %d\n%s", code, logs)
	}
	if c := <-waiting; c != http.StatusOK && c != http.StatusServiceUnavailable {
		t.Fatalf("waiting invocation: %d", c)
	}
	if code, body, _ := call(t, http.MethodPost, base+"/DueWorkPoller", timerInvocation); code != http.StatusOK {
		t.Fatalf("invocation after the store opened: %d %v", code, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if !sawSkip {
		t.Fatal("the custom handler opened the store with migrations")
	}
}

// A failing open (an unreachable server, a refused login) is retried, not fatal.
func TestHandlerRetriesAFailingOpen(t *testing.T) {
	t.Parallel()
	cfg := handlerConfig(t)
	var mu sync.Mutex
	attempts := 0
	opener := func(ctx context.Context, c config.Config, skip bool) (store.Store, error) {
		mu.Lock()
		defer mu.Unlock()
		attempts++
		if attempts < 3 {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: io.ErrUnexpectedEOF}
		}
		return sqlite.Open(ctx, filepath.Join(c.DataDir, "automation.db"), nil)
	}
	base, logs, _, _ := handlerUnderTest(t, cfg, app.Options{OpenStore: opener},
		app.HandlerOptions{OpenRetry: 10 * time.Millisecond, InvocationWait: 5 * time.Second})
	// The invocation waits (bounded) for the retried open instead of failing at once.
	if code, body, _ := call(t, http.MethodPost, base+"/DueWorkPoller", timerInvocation); code != http.StatusOK {
		t.Fatalf("invocation: %d %v\n%s", code, body, logs)
	}
	if n := strings.Count(logs.String(), `"errorCode":"StoreUnavailable"`); n != 2 {
		t.Fatalf("want 2 StoreUnavailable warnings, got %d:\n%s", n, logs)
	}
}

// A database at another schema version than the binary's is reported once, clearly (both
// versions and the migrate command), every request fails meanwhile, the handler does not
// exit, it never migrates - and once `automation migrate` has run it becomes ready by
// itself.
func TestHandlerRefusesASchemaMismatchWithoutExiting(t *testing.T) {
	t.Parallel()
	cfg := handlerConfig(t)
	path := filepath.Join(cfg.DataDir, "automation.db")
	sqlitetest.AtMigration(t, path, 3).Close() // a database an older binary left at version 3

	want, err := sqlstore.MaxMigration(sqlite.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	base, logs, done, _ := handlerUnderTest(t, cfg, app.Options{},
		app.HandlerOptions{SchemaRecheck: 20 * time.Millisecond, InvocationWait: 50 * time.Millisecond})
	deadline := time.Now().Add(firstAnswerBound)
	for !strings.Contains(logs.String(), "SchemaVersionMismatch") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // several re-checks
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["errorCode"] == "SchemaVersionMismatch" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("want exactly one schema ERROR line, got %d:\n%s", len(lines), logs)
	}
	l := lines[0]
	if l["level"] != "ERROR" || l["databaseVersion"] != float64(3) || l["binaryVersion"] != float64(want) || l["command"] != "automation migrate" ||
		!strings.Contains(l["error"].(string), "run `automation migrate`") {
		t.Fatalf("schema line: %v", l)
	}
	code, body, _ := call(t, http.MethodGet, base+"/", "")
	if code != http.StatusServiceUnavailable || body["status"] != "unavailable" || !strings.Contains(body["detail"].(string), fmt.Sprintf("version 3, binary expects %d", want)) {
		t.Fatalf("readiness: %d %v", code, body)
	}
	if code, _, _ := call(t, http.MethodPost, base+"/DueWorkPoller", timerInvocation); code != http.StatusServiceUnavailable {
		t.Fatalf("invocation on a mismatched schema: %d", code)
	}
	select {
	case err := <-done:
		t.Fatalf("the handler exited on a schema mismatch (the host would restart it in a loop): %v", err)
	default:
	}
	check, _ := sql.Open("sqlite", "file:"+path)
	var v int64
	_ = check.QueryRow(`SELECT MAX(version_id) FROM goose_db_version`).Scan(&v)
	check.Close()
	if v != 3 {
		t.Fatalf("the handler migrated the database to %d", v)
	}

	if err := app.Migrate(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(firstAnswerBound)
	for code != http.StatusOK && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		code, _, _ = call(t, http.MethodGet, base+"/", "")
	}
	if code != http.StatusOK {
		t.Fatalf("not ready after migrate: %d\n%s", code, logs)
	}
}
