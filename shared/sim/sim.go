package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/replay"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/trace"
	"github.com/automation-platform/automation/sql/sqlite"
)

// scratch is where runs keep their database: a memory file system when the machine has one
// (/dev/shm), since a run is thrown away and its commits need not reach a disk; else the
// system's temporary directory.
func scratch() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", "automation-sim-probe-*"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return ""
}

// migrated returns the content of a freshly migrated SQLite database, built once per
// process: each run starts from a copy instead of migrating again.
var migrated = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp(scratch(), "automation-sim-template-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "automation.db")
	st, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		return nil, fmt.Errorf("sim: migrating the template database: %w", err)
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// keepDir, set by a test, receives each run's directory and keeps it.
var keepDir func(string)

// Result is one seed's run.
type Result struct {
	Seed     uint64
	Ops      int            // operations in the history
	Faults   map[string]int // faults injected, by kind
	Checked  map[string]int // invariant assertions evaluated, by invariant
	Err      error          // nil: every invariant held; *ViolationError or a pipeline error
	Duration time.Duration
}

// Invariant names the first broken invariant of a failed result ("pipeline-error" when the
// pipeline itself failed).
func (r Result) Invariant() string {
	var ve *ViolationError
	if errors.As(r.Err, &ve) && len(ve.Violations) > 0 {
		return ve.Violations[0].Invariant
	}
	if r.Err != nil {
		return "pipeline-error"
	}
	return ""
}

// RunSeed generates the workload of seed and runs it with the given fault kinds.
func RunSeed(ctx context.Context, seed uint64, kinds map[Kind]bool) Result {
	w := Generate(seed)
	if !kinds[Channel] {
		w = w.without(func(op Op) bool { return op.Kind == OpFault })
		w.Providers = withoutFaults(w.Providers)
	}
	return RunWorkload(ctx, w, kinds)
}

// withoutFaults returns copies of the providers without their faults (the channel kind
// covers the action provider's failures and lost answers too).
func withoutFaults(ps []map[string]any) []map[string]any {
	var out []map[string]any
	for _, p := range ps {
		c := maps.Clone(p)
		delete(c, "faults")
		out = append(out, c)
	}
	return out
}

// without returns a copy of w without the operations drop selects.
func (w *Workload) without(drop func(Op) bool) *Workload {
	c := *w
	c.Ops = nil
	for _, op := range w.Ops {
		if !drop(op) {
			c.Ops = append(c.Ops, op)
		}
	}
	return &c
}

// RunWorkload runs w on a fresh embedded runtime in a temporary directory, with the fault
// kinds injected, and checks the invariants at quiescent points and at the end.
func RunWorkload(ctx context.Context, w *Workload, kinds map[Kind]bool) (res Result) {
	// Run durations are wall time (the progress and the summary's seeds/s), not the
	// simulated clock the workload runs on.
	wall := automation.SystemClock{}
	start := wall.Now()
	res = Result{Seed: w.Seed, Ops: len(w.Ops)}
	defer func() { res.Duration = wall.Now().Sub(start) }()
	sc, err := w.Parse()
	if err != nil {
		res.Err = fmt.Errorf("sim: generated scenario: %w", err)
		return res
	}
	dir, err := os.MkdirTemp(scratch(), "automation-sim-*")
	if err != nil {
		res.Err = err
		return res
	}
	if keepDir != nil {
		keepDir(dir)
	} else {
		defer os.RemoveAll(dir)
	}
	sink := &lineSink{effects: map[string][]effect{}}
	chk := &checker{w: w, dbPath: filepath.Join(dir, "automation.db"), sink: sink, checked: map[string]int{}, dl: newDLState(w)}
	defer chk.close()
	drv := newDriver(w, kinds, chk)
	chk.attributes = func() store.AttributeStore {
		if drv.rt == nil {
			return nil
		}
		return drv.rt.Store
	}
	chk.trace = func() trace.Reader {
		if drv.rt == nil {
			return nil
		}
		return drv.rt.Trace
	}
	db, err := migrated()
	if err != nil {
		res.Err = err
		return res
	}
	drainBatches, drainBatchSize := drainFor(w.Seed)
	_, res.Err = replay.Run(ctx, sc, sink, &replay.Options{Dir: dir, Driver: drv, Database: db, DrainBatches: drainBatches, DrainBatchSize: drainBatchSize})
	res.Faults, res.Checked = drv.counts, chk.checked
	if len(sink.budgetWaits) > 0 {
		// Not a fault: the commands the tight budgets of the workload refused (they waited).
		res.Faults["budget-wait"] = len(sink.budgetWaits)
	}
	drv.bmu.Lock()
	for k, v := range drv.billingCounts {
		res.Faults[k] += v
	}
	drv.bmu.Unlock()
	for _, op := range w.Ops {
		if op.Kind == OpFault {
			res.Faults["channel-"+op.Mode]++
		}
	}
	// The action provider's timeouts: failed (nothing applied) and lost answers (applied),
	// and its lookups that failed or lost their answer.
	for _, p := range chk.providers {
		st := p.Stats()
		res.Faults["provider-fail"] += st.Failed
		res.Faults["provider-lost-answer"] += st.Lost
		res.Faults["provider-lookup-fail"] += st.LookupFailed
		res.Faults["provider-lookup-lost"] += st.LookupLost
	}
	return res
}

// Shrink looks for a smaller history that still fails with the same invariant: it drops
// chunks of operations (halves, quarters, … single ones) while the run keeps failing, within
// budget runs. The faults are drawn from the seed as the run goes, so a smaller history
// may draw them elsewhere; Shrink keeps only histories that still fail.
func Shrink(ctx context.Context, w *Workload, kinds map[Kind]bool, invariant string, budget int) (*Workload, int) {
	runs := 0
	cur := w
	for chunk := max(1, len(cur.Ops)/2); chunk >= 1 && runs < budget; chunk /= 2 {
		for i := 0; i < len(cur.Ops) && runs < budget; {
			cand := *cur
			cand.Ops = append(append([]Op(nil), cur.Ops[:i]...), cur.Ops[min(len(cur.Ops), i+chunk):]...)
			runs++
			if r := RunWorkload(ctx, &cand, kinds); r.Err != nil && r.Invariant() == invariant {
				cur = &cand
				continue
			}
			i += chunk
		}
		if chunk == 1 {
			break
		}
	}
	return cur, runs
}

// Options tune Many.
type Options struct {
	First  uint64 // the first seed (default 1)
	Seeds  int    // how many consecutive seeds (default 1)
	Kinds  map[Kind]bool
	Out    io.Writer // progress and the report; nil: discarded
	TTY    bool      // Out is a terminal: progress rewrites one line
	Shrink bool      // shrink a failing history (budget 60 runs)
	// Workers run seeds concurrently (default 1).
	Workers int
	// ScenarioDir receives the failing (shrunk) history as a scenario file; "" = the
	// system's temporary directory.
	ScenarioDir string
}

// Summary is what Many did.
type Summary struct {
	Seeds    int
	Failed   *Result // the first failure (Many stops there)
	Faults   map[string]int
	Checked  map[string]int
	Duration time.Duration
}

// Many runs opts.Seeds consecutive seeds from opts.First on opts.Workers goroutines (each
// seed is independent and deterministic) and stops at the first failure, which it reports
// with the seed, a one-line command that reproduces it, and (with Shrink) a smaller failing
// history written as a scenario file. Among failures found concurrently the lowest seed is
// reported.
func Many(ctx context.Context, opts Options) Summary {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	if opts.First == 0 {
		opts.First = 1
	}
	opts.Seeds = max(opts.Seeds, 1)
	workers := min(max(opts.Workers, 1), opts.Seeds)
	sum := Summary{Faults: map[string]int{}, Checked: map[string]int{}}
	wall := automation.SystemClock{} // the run's elapsed wall time, not the simulated clock
	start := wall.Now()
	step := max(1, opts.Seeds/10)
	// A failure stops handing out seeds; the seeds in flight finish (a canceled run would
	// fail for its own reasons).
	feed, stop := context.WithCancel(ctx)
	defer stop()
	seeds := make(chan uint64)
	results := make(chan Result)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				results <- RunSeed(ctx, seed, opts.Kinds)
			}
		}()
	}
	go func() {
		defer close(seeds)
		for i := 0; i < opts.Seeds; i++ {
			select {
			case seeds <- opts.First + uint64(i):
			case <-feed.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	for r := range results {
		sum.Seeds++
		for k, v := range r.Faults {
			sum.Faults[k] += v
		}
		for k, v := range r.Checked {
			sum.Checked[k] += v
		}
		if r.Err != nil && ctx.Err() != nil {
			// Interrupted (a signal canceled the run): the seed did not fail, it was stopped.
			sum.Seeds--
			stop()
			continue
		}
		if r.Err != nil {
			if sum.Failed == nil || r.Seed < sum.Failed.Seed {
				sum.Failed = &r
			}
			stop()
			continue
		}
		rate := float64(sum.Seeds) / wall.Now().Sub(start).Seconds()
		switch {
		case opts.TTY:
			fmt.Fprintf(out, "\r  seed %d  [%d/%d]  %.1f seeds/s  faults %d  ", r.Seed, sum.Seeds, opts.Seeds, rate, total(sum.Faults))
		case sum.Seeds%step == 0 || sum.Seeds == opts.Seeds:
			fmt.Fprintf(out, "  %d/%d seeds  %.1f seeds/s  faults %d\n", sum.Seeds, opts.Seeds, rate, total(sum.Faults))
		}
	}
	if opts.TTY {
		fmt.Fprintln(out)
	}
	sum.Duration = wall.Now().Sub(start)
	if sum.Failed != nil {
		reportFailure(ctx, out, *sum.Failed, opts)
	}
	if ctx.Err() != nil {
		fmt.Fprintf(out, "sim: interrupted after %d seeds\n", sum.Seeds)
	}
	fmt.Fprintf(out, "sim: %d seeds in %s (%.1f seeds/s, %d workers), faults %s\n", sum.Seeds, sum.Duration.Round(time.Millisecond),
		float64(sum.Seeds)/sum.Duration.Seconds(), workers, joinCounts(sum.Faults))
	fmt.Fprintf(out, "sim: invariants checked %s\n", joinCounts(sum.Checked))
	return sum
}

func reportFailure(ctx context.Context, out io.Writer, r Result, opts Options) {
	fmt.Fprintf(out, "FAIL seed %d (%s, %d operations):\n  %v\n", r.Seed, r.Invariant(), r.Ops, r.Err)
	fmt.Fprintf(out, "reproduce: go run ./functions sim -seed %d -faults %s\n", r.Seed, KindsString(opts.Kinds))
	if !opts.Shrink {
		return
	}
	w := Generate(r.Seed)
	if !opts.Kinds[Channel] {
		w = w.without(func(op Op) bool { return op.Kind == OpFault })
		w.Providers = withoutFaults(w.Providers)
	}
	small, runs := Shrink(ctx, w, opts.Kinds, r.Invariant(), 60)
	raw, err := small.Scenario()
	if err != nil {
		fmt.Fprintf(out, "shrink: %v\n", err)
		return
	}
	dir := opts.ScenarioDir
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("sim-seed-%d.json", r.Seed))
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		fmt.Fprintf(out, "shrink: %v\n", err)
		return
	}
	fmt.Fprintf(out, "shrunk: %d → %d operations in %d runs; the history is %s (automation replay %s runs it without faults)\n",
		len(w.Ops), len(small.Ops), runs, path, path)
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func joinCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	return strings.Join(sortedCounts(m), " ")
}

// drainFor is the due-work polling of seed's run: an odd seed drains (up to 4 batches of 2
// rows per DueWorkPoller run, each next batch claimed and executed while the last one's
// outcomes are written: scheduler.Poller.Drain), so the claim-crash and lease faults also
// fall between a batch claimed ahead and the completion of the one before it; an even seed
// polls one batch of the default size per run (0, 0). The choice follows from the seed,
// so a seed's run is reproduced by its seed alone.
func drainFor(seed uint64) (batches, size int) {
	if seed%2 == 1 {
		return 4, 2
	}
	return 0, 0
}
