package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/automation-platform/automation/shared/api/supportapi/supportclient"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/store"
)

// usageAsked answers the help forms of an API command (`automation X`, `X help`, `X -h`,
// `X --help`): the usage on stdout, exit 2 without a command (bad usage), 0 when help was
// asked. ok is false when args name a command to run.
func usageAsked(args []string, usage string, stdout io.Writer) (code int, ok bool) {
	if len(args) != 0 && args[0] != "help" && args[0] != "-h" && args[0] != "--help" {
		return 0, false
	}
	fmt.Fprint(stdout, usage)
	if len(args) == 0 {
		return 2, true
	}
	return 0, true
}

// parseFileArg parses args into fs (the flag set of `automation NAME`) and reads the one
// file the arguments name. false: the flags did not parse, there is not exactly one argument
// (usage, a line, is printed) or the file does not read ("automation NAME: ..."); the command
// exits 2.
func parseFileArg(fs *flag.FlagSet, args []string, usage string, stderr io.Writer) ([]byte, bool) {
	if err := fs.Parse(args); err != nil {
		return nil, false
	}
	if fs.NArg() != 1 {
		fmt.Fprint(stderr, usage)
		return nil, false
	}
	raw, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "automation %s: %v\n", fs.Name(), err)
		return nil, false
	}
	return raw, true
}

// apiFlags are the flags every command that calls the management API over HTTP takes:
// -url (default supportclient.DefaultBaseURL), -token (default AUTOMATION_API_TOKEN, read
// by token) and -function-key (the Function App's x-functions-key).
type apiFlags struct {
	base, token, fnKey *string
}

// apiFlagSet is the flag set of one API command ("templates put"): errors and -h print
// usage on stderr; it holds the apiFlags, and the command adds its own.
func apiFlagSet(name, usage string, stderr io.Writer) (*flag.FlagSet, apiFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	return fs, apiFlags{
		base:  fs.String("url", supportclient.DefaultBaseURL, ""),
		token: fs.String("token", "", ""),
		fnKey: fs.String("function-key", "", ""),
	}
}

// apiFlagsUsage is the end of an API command's usage: the apiFlags, with the Azure
// Function (TemplatesApi) whose key -function-key is, and the exit codes.
func apiFlagsUsage(function string) string {
	return `flags of every command:
  -url URL         the API's base URL (default ` + supportclient.DefaultBaseURL + `)
  -token T         bearer token (default AUTOMATION_API_TOKEN)
  -function-key K  the ` + function + ` function's key (x-functions-key), for the Function App

Exit codes: 0 ok, 1 the API refused or failed, 2 bad usage.
`
}

// loadToken fills an empty -token from the configuration (AUTOMATION_API_TOKEN). A
// configuration that does not load is printed after prefix ("automation: configuration:")
// and ok is false (exit 2).
func (f apiFlags) loadToken(getenv func(string) string, prefix string, stderr io.Writer) bool {
	if *f.token != "" {
		return true
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "%s configuration:\n%v\n", prefix, err)
		return false
	}
	*f.token = cfg.APIToken
	return true
}

// parseUnitCommand parses args into fs for the command name ("automation templates put"),
// requires -bu (bu, a flag of fs) and nothing after the flags, then fills the token
// (loadToken, prefix "automation:"). false: usage was wrong or the configuration did not
// load; the reason is printed on stderr and the command exits 2.
func (f apiFlags) parseUnitCommand(fs *flag.FlagSet, args []string, bu *string, name string, getenv func(string) string, stderr io.Writer) bool {
	if err := fs.Parse(args); err != nil {
		return false
	}
	if fs.NArg() > 0 || *bu == "" {
		fmt.Fprintf(stderr, "%s: -bu is required and nothing follows the flags\n", name)
		return false
	}
	return f.loadToken(getenv, "automation:", stderr)
}

// apiRequest is one call of an API command: target is the full URL with its query string,
// header the command's own headers (operator, If-Match), body nil or JSON.
type apiRequest struct {
	method, target string
	header         http.Header
	body           []byte
}

// do sends r with the bearer token and function key, waits at most a minute, and prints
// the answer's body (at most 1 MiB) on stdout. name is the command in messages
// ("automation templates"), cmd its subcommand, named with a refusal. Exit codes: 0 a 2xx answer, 1 a refusal or a failed call
// (the status and body on stderr), 2 a request that cannot be built. With showVersion, an
// answer's ETag is printed on stderr as "version ETAG".
func (f apiFlags) do(ctx context.Context, name, cmd string, r apiRequest, showVersion bool, stdout, stderr io.Writer) int {
	req, err := http.NewRequestWithContext(ctx, r.method, r.target, bytes.NewReader(r.body))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	if r.header != nil {
		req.Header = r.header
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if *f.token != "" {
		req.Header.Set("Authorization", "Bearer "+*f.token)
	}
	if *f.fnKey != "" {
		req.Header.Set("x-functions-key", *f.fnKey)
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		fmt.Fprintf(stderr, "%s %s: %s\n%s\n", name, cmd, resp.Status, out)
		return 1
	}
	if etag := resp.Header.Get("ETag"); showVersion && etag != "" {
		fmt.Fprintf(stderr, "version %s\n", etag)
	}
	_, _ = stdout.Write(out)
	return 0
}

// simFlags are the flags every simulator command takes: -addr (keep it on 127.0.0.1), and
// the fault -mode with its -delay.
type simFlags struct {
	addr, mode, delay *string
}

// simFlagSet is the flag set of a simulator command (name "acs-sim") listening on addr by
// default; modeHelp and delayHelp describe its fault modes. The command adds its own flags.
func simFlagSet(name, addr, modeHelp, delayHelp string, stderr io.Writer) (*flag.FlagSet, simFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs, simFlags{
		addr:  fs.String("addr", addr, "listen address (keep it on 127.0.0.1)"),
		mode:  fs.String("mode", "", modeHelp),
		delay: fs.String("delay", "", delayHelp),
	}
}

// simServer is what the simulator commands serve: a shared/simhttp listener with its
// handler (providersim, acssim, fcmsim).
type simServer interface {
	Start(addr string) error
	URL() string
	Close() error
}

// serveSim is the tail every simulator command shares: it applies the fault mode (exit 2
// when refused), listens on addr (exit 1 when it cannot), runs written (the file a
// simulator leaves for serve, or nil; exit 1 when it fails), prints the base URL on stdout
// and serves until ctx ends (exit 0). name is the command ("acs-sim").
func serveSim(ctx context.Context, name string, s simServer, setFaults func() error, addr string, written func(url string) error, stdout, stderr io.Writer) int {
	if err := setFaults(); err != nil {
		fmt.Fprintf(stderr, "automation %s: %v\n", name, err)
		return 2
	}
	if err := s.Start(addr); err != nil {
		fmt.Fprintf(stderr, "automation %s: %v\n", name, err)
		return 1
	}
	defer s.Close()
	if written != nil {
		if err := written(s.URL()); err != nil {
			fmt.Fprintf(stderr, "automation %s: %v\n", name, err)
			return 1
		}
	}
	fmt.Fprintln(stdout, s.URL())
	<-ctx.Done()
	return 0
}

// fileSim is a simulator command that leaves one file for serve (acs-sim's connection
// string, fcm-sim's service-account key): its name, default address and fault-mode help,
// and the flag that names the file with its help and what the file is ("key file").
type fileSim struct {
	name, addr, modeHelp string
	fileFlag, fileHelp   string
	fileWhat             string
	extraFlags           func(fs *flag.FlagSet)
	open                 func(f simFlags) (s simServer, setFaults func() error, content func(url string) []byte, err error)
}

// run parses args (the -file flag is required and nothing may follow the flags: exit 2),
// builds the simulator (open; exit 1 when it fails) and serves it with serveSim, writing the
// file (mode 0600) with its content for the simulator's URL once it listens.
func (c fileSim) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := simFlagSet(c.name, c.addr, c.modeHelp, "delay of slow and timeout (a Go duration)", stderr)
	file := fs.String(c.fileFlag, "", c.fileHelp)
	if c.extraFlags != nil {
		c.extraFlags(fs)
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *file == "" {
		fmt.Fprintf(stderr, "automation %s: -%s is required and takes no arguments\n", c.name, c.fileFlag)
		return 2
	}
	s, setFaults, content, err := c.open(f)
	if err != nil {
		fmt.Fprintf(stderr, "automation %s: %v\n", c.name, err)
		return 1
	}
	return serveSim(ctx, c.name, s, setFaults, *f.addr, func(url string) error {
		if err := os.WriteFile(*file, content(url), 0o600); err != nil {
			return fmt.Errorf("%s: %w", c.fileWhat, err)
		}
		return nil
	}, stdout, stderr)
}

// openStore opens the configured store for a command that works on it directly (keys,
// sessions): SQLite is migrated on open, as serve does; SQL Server needs `automation
// migrate` first. code is 2 for a configuration that does not load, 1 for a store that
// does not open (printed after "automation NAME:"), 0 with st to close.
func openStore(ctx context.Context, name string, getenv func(string) string, stderr io.Writer) (st store.Store, code int) {
	cfg, _, ok := loadConfig(getenv, stderr)
	if !ok {
		return nil, 2
	}
	st, err := app.OpenStore(ctx, cfg, cfg.UsesSQLServer())
	if err != nil {
		fmt.Fprintf(stderr, "automation %s: %v\n", name, err)
		return nil, 1
	}
	return st, 0
}

// refused prints a command's failure after "automation NAME:" and answers its exit code: 2
// for the caller's mistake (an *automation.Error, or one of badInput such as
// store.ErrNotFound), 1 otherwise.
func refused(stderr io.Writer, name string, err error, badInput ...error) int {
	fmt.Fprintf(stderr, "automation %s: %v\n", name, err)
	var ae *automation.Error
	if errors.As(err, &ae) {
		return 2
	}
	for _, b := range badInput {
		if errors.Is(err, b) {
			return 2
		}
	}
	return 1
}
