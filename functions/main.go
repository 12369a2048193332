// Command automation is the only binary: the Azure Functions custom handler and the
// embedded runtime's commands.
//
//	automation replay [-db DIR] <scenario.json>   run a scenario on a simulated clock (§9)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/automation-platform/automation/shared/replay"
)

const usage = `usage: automation <command> [flags]

commands:
  replay [-db DIR] <scenario.json>   replay a scenario file on a simulated clock; writes
                                     one JSON line per delivery/rejection and a summary
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command and returns the process exit code: 0 ok, 1 runtime failure,
// 2 bad usage or bad input.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "replay":
		return replayCmd(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "automation: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

func replayCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("db", "", "keep the run's SQLite database and trace in `DIR` (default: a temporary directory, removed)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprint(stderr, "usage: automation replay [-db DIR] <scenario.json>\n")
		return 2
	}
	raw, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "automation replay: %v\n", err)
		return 2
	}
	sc, err := replay.Parse(raw)
	if err != nil {
		fmt.Fprintf(stderr, "automation replay: %s: %v\n", fs.Arg(0), err)
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
