package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"

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
	kindNames := make([]string, len(sim.AllKinds))
	for i, k := range sim.AllKinds {
		kindNames[i] = string(k)
	}
	faults := fs.String("faults", "all", "fault kinds: all, none or a comma-separated `LIST` of ("+strings.Join(kindNames, ", ")+")")
	workers := fs.Int("workers", runtime.NumCPU(), "seeds run concurrently on `N` goroutines")
	shrink := fs.Bool("shrink", true, "on a failure, look for a smaller failing history and write it as a scenario file")
	out := fs.String("out", "", "write the failing history's scenario file to `DIR` (default: the temporary directory)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "automation sim: "+format+"\n", a...)
		fmt.Fprint(stderr, "usage: automation sim [-seeds N] [-seed S] [-faults LIST] [-workers N] [-shrink=false] [-out DIR]\n")
		return 2
	}
	if fs.NArg() != 0 {
		return usage("unexpected argument %q", fs.Arg(0))
	}
	// An empty -faults is not a list: it would silently mean every kind.
	if strings.TrimSpace(*faults) == "" {
		return usage("-faults is empty: all, none or a comma-separated list of kinds")
	}
	kinds, err := sim.ParseKinds(*faults)
	if err != nil {
		return usage("-faults: %v", err)
	}
	n := *seeds
	switch {
	case set["seeds"] && n < 1:
		return usage("-seeds must be positive")
	case set["seed"] && *seed == 0:
		return usage("-seed must be at least 1 (seeds are numbered from 1)")
	case set["workers"] && *workers < 1:
		return usage("-workers must be at least 1")
	case n == 0 && set["seed"]:
		n = 1
	case n == 0:
		n = 200
	}
	if first := max(*seed, 1); uint64(n-1) > math.MaxUint64-first {
		return usage("-seeds %d from seed %d passes the last seed %d", n, first, uint64(math.MaxUint64))
	}
	if *out != "" {
		// Checked now, not after a failure has been found and shrunk.
		if st, err := os.Stat(*out); err != nil || !st.IsDir() {
			return usage("-out %s is not a directory", *out)
		}
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
