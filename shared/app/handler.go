package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// Custom-handler start-up defaults (HandlerOptions).
const (
	// DefaultOpenTimeout bounds one attempt to open the runtime: the SQL Server connection
	// check waits up to 35 s (mssql.DefaultConnectTimeout + 5 s), a schema check a few more.
	DefaultOpenTimeout = time.Minute
	// DefaultOpenRetry is the first wait after a failed attempt; it doubles up to
	// DefaultOpenRetryMax.
	DefaultOpenRetry    = 5 * time.Second
	DefaultOpenRetryMax = 2 * time.Minute
	// DefaultSchemaRecheck is how often a schema-version mismatch is checked again, so the
	// handler becomes ready without a restart once `automation migrate` has run.
	DefaultSchemaRecheck = time.Minute
)

// HandlerOptions tune ServeHandler; zero fields mean the defaults above.
type HandlerOptions struct {
	OpenTimeout   time.Duration
	OpenRetry     time.Duration
	OpenRetryMax  time.Duration
	SchemaRecheck time.Duration
	// InvocationWait: how long a request waits for the store before answering 503
	// (funchost.DefaultGateWait when zero).
	InvocationWait time.Duration
	// Serve tunes the HTTP server; its Ready is called once the listener is open.
	Serve *funchost.ServeOptions
	// Prepare, when set, runs on the opened runtime before it is made ready (main wires the
	// in-process bus there). An error is logged and the runtime closed and opened again at
	// the next attempt. The returned stop func (may be nil) runs before the runtime closes.
	Prepare func(ctx context.Context, rt *Runtime) (stop func(), err error)
}

// ServeHandler serves the Functions custom-handler protocol on addr (127.0.0.1:PORT, see
// funchost.Addr) until ctx ends. The listener opens first, before any database work, so
// the host's start-up limit (30 s on every plan: HttpWorkerOptions.InitializationTimeout,
// which DefaultHttpWorkerService.IsWorkerReady waits for) never depends on the database: a funchost.Gate answers until the runtime is usable (GET / → 503, invocations
// wait up to InvocationWait and then answer a retryable 503).
//
// The runtime is opened in the background with o.SkipMigrations forced on: the handler
// never migrates. A database whose schema version differs from the binary's is reported
// with one ERROR line naming both versions and `automation migrate` (again only when the
// versions change), re-checked every SchemaRecheck, and answered with failures meanwhile -
// the process does not exit, so the host does not restart it in a loop. Any other open
// error (unreachable server, login failure, timeout after OpenTimeout) is logged as a
// warning and retried with a doubling delay. ServeHandler returns nil after a clean
// shutdown, else the listen/serve error; the runtime is closed before it returns.
func ServeHandler(ctx context.Context, addr string, cfg config.Config, o Options, h HandlerOptions) error {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o.SkipMigrations = true
	gate := funchost.NewGate(h.InvocationWait)
	openCtx, stopOpen := context.WithCancel(ctx)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		rt      *Runtime
		stopRun func()
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		r, stop := openUntilReady(openCtx, cfg, o, h, gate, log)
		mu.Lock()
		rt, stopRun = r, stop
		mu.Unlock()
	}()
	err := funchost.Serve(ctx, addr, gate, h.Serve)
	stopOpen()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if stopRun != nil {
		stopRun()
	}
	if rt != nil {
		err = errors.Join(err, rt.Close())
	}
	return err
}

// openUntilReady opens the runtime until it succeeds or ctx ends (see ServeHandler).
func openUntilReady(ctx context.Context, cfg config.Config, o Options, h HandlerOptions, gate *funchost.Gate, log *slog.Logger) (*Runtime, func()) {
	openTimeout := pickDur(h.OpenTimeout, DefaultOpenTimeout)
	retry, retryMax := pickDur(h.OpenRetry, DefaultOpenRetry), pickDur(h.OpenRetryMax, DefaultOpenRetryMax)
	recheck := pickDur(h.SchemaRecheck, DefaultSchemaRecheck)
	var reported *sqlstore.SchemaError
	delay := retry
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, openTimeout)
		rt, err := Open(actx, cfg, o)
		cancel()
		var stop func()
		if err == nil && h.Prepare != nil {
			if stop, err = h.Prepare(ctx, rt); err != nil {
				_ = rt.Close()
				err = fmt.Errorf("preparing the runtime: %w", err)
			}
		}
		if err == nil {
			gate.SetReady(rt.Functions)
			log.Info("custom handler ready", "attempt", attempt, "store", storeKind(cfg))
			return rt, stop
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		wait := delay
		var se *sqlstore.SchemaError
		if errors.As(err, &se) {
			gate.SetUnavailable(fmt.Sprintf("database schema version %d, binary expects %d: run `%s`", se.Database, se.Binary, sqlstore.MigrateCommand))
			if reported == nil || *reported != *se {
				log.Error("database schema version does not match this binary; every invocation fails until it does",
					"databaseVersion", se.Database, "binaryVersion", se.Binary, "dialect", se.Dialect,
					"command", sqlstore.MigrateCommand, "errorCode", "SchemaVersionMismatch", "error", se.Error())
				reported = se
			}
			wait = recheck
		} else {
			gate.SetUnavailable("the store could not be opened yet; retrying")
			log.Warn("store not usable yet; invocations answer 503 until it is", "attempt", attempt, "retryIn", wait.String(),
				"store", storeKind(cfg), "errorCode", "StoreUnavailable", "error", err.Error())
			delay = min(delay*2, retryMax)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-t.C:
		}
	}
}

func pickDur(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

func storeKind(cfg config.Config) string {
	if cfg.UsesSQLServer() {
		return "sqlserver"
	}
	return "sqlite"
}
