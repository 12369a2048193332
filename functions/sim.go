package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/automation-platform/automation/shared/sim"
)

// simCmd runs the deterministic fault simulation (shared/sim, docs/simulation.md): flags
// and wiring only. Exit 0 when every seed held every invariant, 1 on the first failure (the
// report names the seed and the command that reproduces it), 2 on bad usage.
func simCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.Int("seeds", 0, "run `N` consecutive seeds (default 200, or 1 with -seed)")
	seed := fs.Uint64("seed", 0, "the first seed `S` (default 1); with -seed alone, only S runs: the reproduce command")
	faults := fs.String("faults", "all", "fault kinds: all, none or a comma-separated `LIST` of"+
		" (claim-crash, lease, send-crash, relay-crash, bus-dup, bus-delay, restart, channel, attribute-crash,"+
		" campaign-crash, charge-crash, billing-fail, billing-lost-answer)")
	workers := fs.Int("workers", runtime.NumCPU(), "seeds run concurrently on `N` goroutines")
	shrink := fs.Bool("shrink", true, "on a failure, look for a smaller failing history and write it as a scenario file")
	out := fs.String("out", "", "write the failing history's scenario file to `DIR` (default: the temporary directory)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprint(stderr, "usage: automation sim [-seeds N] [-seed S] [-faults LIST] [-workers N] [-shrink=false] [-out DIR]\n")
		return 2
	}
	kinds, err := sim.ParseKinds(*faults)
	if err != nil {
		fmt.Fprintf(stderr, "automation sim: -faults: %v\n", err)
		return 2
	}
	n := *seeds
	switch {
	case n < 0:
		fmt.Fprintln(stderr, "automation sim: -seeds must be positive")
		return 2
	case n == 0 && *seed != 0:
		n = 1
	case n == 0:
		n = 200
	}
	tty := false
	if f, ok := stdout.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	fmt.Fprintf(stdout, "sim: %d seeds from %d, faults %s\n", n, max(*seed, 1), sim.KindsString(kinds))
	sum := sim.Many(ctx, sim.Options{First: *seed, Seeds: n, Kinds: kinds, Out: stdout, TTY: tty, Shrink: *shrink, Workers: *workers, ScenarioDir: *out})
	if sum.Failed != nil || ctx.Err() != nil {
		return 1
	}
	return 0
}
