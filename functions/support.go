package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/api/supportapi"
	"github.com/automation-platform/automation/shared/api/supportapi/supportclient"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/support"
)

const supportUsage = `usage: automation support <command> [flags] [arguments]

The support API from a terminal (a running serve, or the Function App's SupportApi).

commands:
  find      rows by filters: -key K, -source TYPE/GUID, -bu ID, -status S, -on-hold,
            -from T, -to T (RFC 3339), -limit N, -cursor C
  show      ID                  one row (Id or Guid): attempts, audit, deliveries, diagnostics
  explain   TYPE GUID           why a source's reminders did or did not go out
  release   ID -reason R        release one row's support hold
  release   -reason R -rate N [-batch N] [-max N] and at least one filter of
            -bu, -source, -status, -failure-reason, -from, -to: a paced release
  retry     ID -reason R        retry now (a row that ended gets a support-retry row)
  cancel    ID -reason R        cancel a row
  run-now   ID -reason R        make a Pending row due now (the operator's trigger)
  metrics   [-bu ID]            the pipeline's health figures

flags of every command:
  -url URL              the API's base URL (default http://127.0.0.1:7071)
  -token T              bearer token (default AUTOMATION_API_TOKEN)
  -function-key K       the SupportApi function's key (x-functions-key), for the Function App
  -operator NAME        your name for the audit (required by release, retry, cancel, run-now)
  -business-units LIST  narrow what you see (X-Automation-Business-Units)
  -version V            (release, retry, cancel, run-now) the version you read; default: read it now
  -json                 print the API's JSON instead of tables

Exit codes: 0 ok, 1 the API refused or failed, 2 bad usage.
`

// supportCmd runs `automation support ...`.
func supportCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if code, ok := usageAsked(args, supportUsage, stdout); ok {
		return code
	}
	cmd := args[0]
	fs, api := apiFlagSet("support "+cmd, supportUsage, stderr)
	op := fs.String("operator", "", "")
	units := fs.String("business-units", "", "")
	asJSON := fs.Bool("json", false, "")
	var (
		key, source, bu, status, from, to, cursor, reason, failure string
		onHold                                                     bool
		limit, version, rate, batch, maxRows                       int64
	)
	switch cmd {
	case "find":
		fs.StringVar(&key, "key", "", "")
		fs.StringVar(&source, "source", "", "")
		fs.StringVar(&bu, "bu", "", "")
		fs.StringVar(&status, "status", "", "")
		fs.BoolVar(&onHold, "on-hold", false, "")
		fs.StringVar(&from, "from", "", "")
		fs.StringVar(&to, "to", "", "")
		fs.Int64Var(&limit, "limit", 0, "")
		fs.StringVar(&cursor, "cursor", "", "")
	case "release":
		fs.StringVar(&source, "source", "", "")
		fs.StringVar(&bu, "bu", "", "")
		fs.StringVar(&status, "status", "", "")
		fs.StringVar(&failure, "failure-reason", "", "")
		fs.StringVar(&from, "from", "", "")
		fs.StringVar(&to, "to", "", "")
		fs.Int64Var(&rate, "rate", 0, "")
		fs.Int64Var(&batch, "batch", 0, "")
		fs.Int64Var(&maxRows, "max", 0, "")
		fallthrough
	case "retry", "cancel", "run-now":
		fs.StringVar(&reason, "reason", "", "")
		fs.Int64Var(&version, "version", 0, "")
	case "metrics":
		fs.StringVar(&bu, "bu", "", "")
	case "show", "explain":
	default:
		fmt.Fprintf(stderr, "automation support: unknown command %q\n\n%s", cmd, supportUsage)
		return 2
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "automation support %s: %s\n", cmd, fmt.Sprintf(format, a...))
		return 2
	}
	if !api.loadToken(getenv, "automation support:", stderr) {
		return 2
	}
	c := &supportclient.Client{BaseURL: *api.base, Token: *api.token, FunctionKey: *api.fnKey, Operator: *op, BusinessUnits: *units, HTTP: &http.Client{Timeout: time.Minute}}
	out := &supportclient.Printer{W: stdout, JSON: *asJSON}
	// render prints a successful answer; an error (the API's or the transport's) is returned.
	render := func(pr func(supportclient.Answer) error, a supportclient.Answer, err error) error {
		if err != nil {
			return err
		}
		return pr(a)
	}
	var runErr error
	switch cmd {
	case "find":
		if len(pos) != 0 {
			return usageErr("takes no arguments, only flags")
		}
		q := supportclient.FindQuery{Query: support.Query{SchedulerKey: key, BusinessUnitID: bu, Status: status, ScheduledFrom: from, ScheduledTo: to},
			Limit: limit, Cursor: cursor}
		if onHold {
			q.OnHold = "true"
		}
		if source != "" {
			typ, guid, ok := strings.Cut(source, "/")
			if !ok || typ == "" || guid == "" {
				return usageErr("-source must be TYPE/GUID, got %q", source)
			}
			q.SourceType, q.SourceGuid = typ, guid
		}
		a, err := c.Find(ctx, q)
		runErr = render(out.Find, a, err)
	case "show":
		if len(pos) != 1 {
			return usageErr("needs the row's Id or Guid")
		}
		a, err := c.Show(ctx, pos[0])
		runErr = render(out.Show, a, err)
	case "explain":
		if len(pos) != 2 {
			return usageErr("needs TYPE and GUID of the source, e.g. explain PoliceVetting 3b2d6f0e-…")
		}
		a, err := c.Explain(ctx, pos[0], pos[1])
		runErr = render(out.Explain, a, err)
	case "metrics":
		if len(pos) != 0 {
			return usageErr("takes no arguments")
		}
		a, err := c.Metrics(ctx, bu)
		runErr = render(out.Metrics, a, err)
	case "release", "retry", "cancel", "run-now":
		if c.Operator == "" {
			return usageErr("-operator is required: actions are audited with your name")
		}
		if cmd == "release" && len(pos) == 0 {
			if version != 0 {
				return usageErr("-version applies to one row, not to a paced release")
			}
			// Only the counts given on the command line are sent (the API refuses 0).
			setFlags := map[string]bool{}
			fs.Visit(func(f *flag.Flag) { setFlags[f.Name] = true })
			count := func(name string, v int64) *int {
				if !setFlags[name] {
					return nil
				}
				n := int(v)
				return &n
			}
			body := supportapi.ReleaseBody{Reason: reason, RatePerMinute: count("rate", rate), BatchSize: count("batch", batch),
				MaxRows: count("max", maxRows), Filter: support.ReleaseFilter{BusinessUnitID: bu}}
			body.Filter.Status = automation.Status(status)
			body.Filter.FailureReasonCode = automation.ReasonCode(failure)
			if source != "" {
				typ, guid, ok := strings.Cut(source, "/")
				if !ok {
					return usageErr("-source must be TYPE/GUID, got %q", source)
				}
				body.Filter.SourceType, body.Filter.SourceGuid = typ, guid
			}
			for _, t := range []struct {
				flag, v string
				dst     **time.Time
			}{{"-from", from, &body.Filter.ScheduledFrom}, {"-to", to, &body.Filter.ScheduledTo}} {
				if t.v == "" {
					continue
				}
				at, err := time.Parse(time.RFC3339, t.v)
				if err != nil {
					return usageErr("%s must be an RFC 3339 instant such as 2026-11-30T09:00:00Z", t.flag)
				}
				*t.dst = &at
			}
			a, err := c.Release(ctx, body)
			runErr = render(out.Released, a, err)
			break
		}
		if cmd == "release" && (rate != 0 || batch != 0 || maxRows != 0 || bu != "" || source != "" || status != "" || failure != "" || from != "" || to != "") {
			return usageErr("filters and -rate/-batch/-max are for a paced release, without a row id")
		}
		if len(pos) != 1 {
			return usageErr("needs the row's Id or Guid")
		}
		a, err := c.Act(ctx, cmd, pos[0], version, reason)
		runErr = render(out.Acted, a, err)
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "automation support %s: %v\n", cmd, runErr)
		return 1
	}
	return 0
}

// parseInterspersed parses flags wherever they appear among the arguments and returns the
// positional ones in order.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
