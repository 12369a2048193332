package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

const keysUsage = `usage: automation keys <create|list|revoke|rotate> [flags]

  create -name NAME -role ROLE[,ROLE] -units ID[,ID]|*   issue a key; it is printed once
  list   [-json]                                         the keys (never their secrets)
  revoke PREFIX                                          end a key at once
  rotate [-overlap 24h] PREFIX                           a successor; the old key ends after the overlap

Roles: ingest, read, operate, admin (docs/security.md#roles). The store is the configured
one (AUTOMATION_DATA_DIR, or AUTOMATION_SQLSERVER_DSN once "automation migrate" ran).
`

// keysCmd manages API keys straight in the configured store (the admin API /api/keys does
// the same over HTTP). The operator recorded is "cli:" + the -operator flag or $USER.
func keysCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, keysUsage)
		return 2
	}
	sub, args := args[0], args[1:]
	if sub == "-h" || sub == "-help" || sub == "--help" || sub == "help" {
		fmt.Fprint(stdout, keysUsage)
		return 0
	}
	fs := flag.NewFlagSet("keys "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	operator := fs.String("operator", cmpOr(getenv("USER"), "unknown"), "who makes the change (audit)")
	var name, roles, units *string
	var overlap *time.Duration
	var asJSON *bool
	switch sub {
	case "create":
		name = fs.String("name", "", "who holds the key (`NAME`, e.g. pos-sydney)")
		roles = fs.String("role", "", "comma-separated `ROLES`: ingest, read, operate, admin")
		units = fs.String("units", "", "comma-separated business-unit `IDS`, or * for every unit")
	case "list":
		asJSON = fs.Bool("json", false, "print JSON lines")
	case "revoke":
	case "rotate":
		overlap = fs.Duration("overlap", apikey.DefaultOverlap, "how long the old key keeps working")
	default:
		fmt.Fprintf(stderr, "automation keys: unknown subcommand %q\n\n%s", sub, keysUsage)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	wantArgs := 0
	if sub == "revoke" || sub == "rotate" {
		wantArgs = 1
	}
	if fs.NArg() != wantArgs {
		fmt.Fprint(stderr, keysUsage)
		return 2
	}
	if cfg, _, ok := loadConfig(getenv, stderr); ok {
		// Name the store the command opens: without AUTOMATION_DATA_DIR a key lands in (or is
		// looked up in) ./.data, not in the store a `serve -data …` or a guide's prefix used.
		if cfg.UsesSQLServer() {
			fmt.Fprintln(stderr, "automation keys: store SQL Server (AUTOMATION_SQLSERVER_DSN)")
		} else {
			path := app.SQLitePath(cfg)
			fmt.Fprintf(stderr, "automation keys: store %s (AUTOMATION_DATA_DIR=%s)\n", path, cfg.DataDir)
			if sub != "create" {
				if _, err := os.Stat(path); errors.Is(err, iofs.ErrNotExist) {
					fmt.Fprintf(stderr, "automation keys %s: no store at %s (set AUTOMATION_DATA_DIR to the folder serve used, e.g. AUTOMATION_DATA_DIR=.data/demo)\n", sub, path)
					return 2
				}
			}
		}
	}
	st, code := openStore(ctx, "keys", getenv, stderr)
	if st == nil {
		return code
	}
	defer st.Close()
	svc := &apikey.Service{Store: st, Clock: automation.SystemClock{}}
	op := "cli:" + strings.TrimSpace(*operator)
	fail := func(err error) int { return refused(stderr, "keys "+sub, err, store.ErrNotFound) }
	switch sub {
	case "create":
		rs, err := apikey.ParseRoles(*roles)
		if err != nil {
			return fail(err)
		}
		c, err := svc.Create(ctx, apikey.CreateParams{Name: *name, Roles: rs, Units: *units, Operator: op})
		if err != nil {
			return fail(err)
		}
		printCreated(stdout, c)
		warnUnknownUnits(ctx, st, c.BusinessUnits, stderr)
	case "list":
		return listKeys(ctx, svc, stdout, *asJSON, fail)
	case "revoke":
		k, err := svc.Revoke(ctx, fs.Arg(0), op)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "revoked %s (%s) at %s\n", k.Prefix, k.Name, k.RevokedOn.Format(time.RFC3339))
	case "rotate":
		d := *overlap
		if d == 0 {
			d = -1 // the flag's 0 means "end the old key now"; the service's 0 means the default
		}
		c, err := svc.Rotate(ctx, fs.Arg(0), d, op)
		if err != nil {
			return fail(err)
		}
		printCreated(stdout, c)
		if old, err := svc.Get(ctx, fs.Arg(0)); err == nil && old.ExpiresOn != nil {
			fmt.Fprintf(stdout, "the old key %s works until %s\n", old.Prefix, old.ExpiresOn.Format(time.RFC3339))
		}
	}
	return 0
}

func printCreated(w io.Writer, c apikey.Created) {
	fmt.Fprintf(w, "%s\n", c.Secret)
	fmt.Fprintf(w, "prefix %s, name %s, roles %s, units %s\n", c.Prefix, c.Name, rolesText(c.Roles), c.BusinessUnits)
	fmt.Fprintln(w, "Store the key now: it is not shown again (only its SHA-256 is kept).")
}

func rolesText(rs []httpapi.Role) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ",")
}

func listKeys(ctx context.Context, svc *apikey.Service, stdout io.Writer, asJSON bool, fail func(error) int) int {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if !asJSON {
		fmt.Fprintln(tw, "PREFIX\tNAME\tROLES\tUNITS\tCREATED\tSTATE")
	}
	after := ""
	for {
		ks, err := svc.List(ctx, after, store.MaxBatch)
		if err != nil {
			return fail(err)
		}
		for _, k := range ks {
			if asJSON {
				b, _ := json.Marshal(k)
				fmt.Fprintln(stdout, string(b))
				continue
			}
			state := "active"
			switch {
			case k.RevokedOn != nil:
				state = "revoked " + k.RevokedOn.Format(time.RFC3339)
			case k.ExpiresOn != nil:
				state = "ends " + k.ExpiresOn.Format(time.RFC3339) + " (replaced by " + k.ReplacedBy + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.Prefix, k.Name, rolesText(k.Roles), k.BusinessUnits, k.CreatedOn.Format(time.RFC3339), state)
		}
		if len(ks) < store.MaxBatch {
			break
		}
		after = ks[len(ks)-1].Prefix
	}
	if !asJSON {
		tw.Flush()
	}
	return 0
}

// warnUnknownUnits prints one warning naming the units of a key's scope (comma-separated
// ids; "*" names none) that this store does not hold. A key may be made before its unit, so
// this warns and does not refuse; a typo (bu-syd for bu-sydney) shows here, not as a 404 later.
func warnUnknownUnits(ctx context.Context, st store.Store, units string, stderr io.Writer) {
	if units == "*" || units == "" {
		return
	}
	var unknown []string
	for _, id := range strings.Split(units, ",") {
		if _, err := st.BusinessUnitGet(ctx, id); errors.Is(err, store.ErrNotFound) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		fmt.Fprintf(stderr, "automation keys create: warning: no business unit %s in this store yet; the key answers 404 for it until the unit exists\n", strings.Join(unknown, ", "))
	}
}
