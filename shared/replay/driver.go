package replay

// The simulator's hold on a replay (shared/sim, docs/simulation.md): a Driver injects the
// fault points into the runtime, watches every step, restarts the process on the same
// database when it crashed, and finishes the run. Without a Driver a replay is unchanged.

import (
	"context"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/config"
)

// Driver steers a replay for the deterministic simulator. Every method is called on the
// replay's goroutine.
type Driver interface {
	// Faults returns the fault points for the next process (called before each app.Open).
	Faults() *app.Faults
	// Started is called after each process start (the first and every restart) with the
	// runtime and kill, which ends the process: every store call of the step in progress
	// fails from then on, so nothing after the fault point is written. The steps of a
	// process run with its context.
	Started(rt *app.Runtime, kill func())
	// After is called after each input and each tick at now, with the step's error (nil
	// when it succeeded). It answers restart (close the runtime, open a new one on the same
	// database: every in-memory state is lost) and an error that ends the replay.
	After(ctx context.Context, now time.Time, stepErr error) (restart bool, err error)
	// Finish is called after the last input and tick, before the runtime closes: the
	// simulator drains the pipeline and checks its invariants there.
	Finish(ctx context.Context, rt *app.Runtime) error
}

// procState is the runner's process: cfg and appOpts open each one (a Driver restarts
// it); proc is the current process's context and kill ends it.
type procState struct {
	cfg     config.Config
	appOpts app.Options
	driver  Driver
	proc    context.Context
	kill    context.CancelFunc
}

// restart closes the current process and opens a new one on the same directory: the
// database and trace survive; the in-process bus, caches and leases held in memory do not.
// Dispatch messages the old bus held are put back as serve does at start
// (Runtime.RedispatchUnsent, Runtime.CatchUpProjection).
func (r *runner) restart(ctx context.Context) error {
	if r.kill != nil {
		r.kill()
	}
	if err := r.e.Close(); err != nil {
		return fmt.Errorf("restart: close: %w", err)
	}
	r.e = nil
	if err := r.open(ctx); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	if _, err := r.e.RedispatchUnsent(r.proc); err != nil {
		return fmt.Errorf("restart: redispatch: %w", err)
	}
	if _, err := r.e.CatchUpProjection(r.proc); err != nil {
		return fmt.Errorf("restart: projection: %w", err)
	}
	return nil
}

// open starts a process on the run's configuration.
func (r *runner) open(ctx context.Context) error {
	opts := r.appOpts
	if r.driver != nil {
		opts.Faults = r.driver.Faults()
	}
	e, err := app.Open(ctx, r.cfg, opts)
	if err != nil {
		return err
	}
	r.e = e
	r.api = e.Functions
	// A settings change is applied in full when it is replayed (the simulator has no
	// Reconciliation timer to finish a large propagation later).
	e.Admin.InlineBatches = 1 << 20
	r.proc, r.kill = context.WithCancel(ctx)
	if r.driver != nil {
		r.driver.Started(e, r.kill)
	}
	return nil
}

// after reports a step to the driver; without one a step error ends the replay.
func (r *runner) after(ctx context.Context, now time.Time, stepErr error) error {
	if r.driver == nil {
		return stepErr
	}
	restart, err := r.driver.After(ctx, now, stepErr)
	if err != nil {
		return err
	}
	if restart {
		return r.restart(ctx)
	}
	return nil
}
