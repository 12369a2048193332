package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/automation-platform/automation/shared/api/supportapi/supportclient"
	"github.com/automation-platform/automation/shared/config"
)

const preferencesUsage = `usage: automation preferences <command> [RECIPIENT] -bu ID [flags]

Recipient preferences and quiet hours from a terminal (a running serve, or the Function
App's PreferencesApi; docs/channels.md#recipient-preferences). Prints the API's JSON answer.

commands:
  get          RECIPIENT -bu ID                          the recipient's stored preferences and quiet hours
  put          RECIPIENT -bu ID -file P.json -operator N  set them ({"preferences":[{"channel","category","optedIn"}],"quietHours":{…}})
  quiet-hours  -bu ID                                     the unit's window
  quiet-hours  -bu ID -start HH:MM -end HH:MM [-zone Z] -operator N   set it
  quiet-hours  -bu ID -delete -operator N                 remove it

flags of every command:
  -url URL         the API's base URL (default http://127.0.0.1:7071)
  -token T         bearer token (default AUTOMATION_API_TOKEN)
  -function-key K  the PreferencesApi function's key (x-functions-key), for the Function App

Exit codes: 0 ok, 1 the API refused or failed, 2 bad usage.
`

// preferencesCmd runs `automation preferences ...`.
func preferencesCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, preferencesUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, rest := args[0], args[1:]
	if cmd != "get" && cmd != "put" && cmd != "quiet-hours" {
		fmt.Fprintf(stderr, "automation preferences: unknown command %q\n\n%s", cmd, preferencesUsage)
		return 2
	}
	recipient := ""
	if cmd != "quiet-hours" {
		// The recipient comes first (flag parsing stops at the first argument).
		if len(rest) == 0 || rest[0] == "" || rest[0][0] == '-' {
			fmt.Fprintf(stderr, "automation preferences %s: the RECIPIENT comes first\n", cmd)
			return 2
		}
		recipient, rest = rest[0], rest[1:]
	}
	fs := flag.NewFlagSet("preferences "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, preferencesUsage) }
	base := fs.String("url", supportclient.DefaultBaseURL, "")
	token := fs.String("token", "", "")
	fnKey := fs.String("function-key", "", "")
	bu := fs.String("bu", "", "")
	file := fs.String("file", "", "")
	op := fs.String("operator", "", "")
	start := fs.String("start", "", "")
	end := fs.String("end", "", "")
	zone := fs.String("zone", "", "")
	del := fs.Bool("delete", false, "")
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *bu == "" {
		fmt.Fprintf(stderr, "automation preferences %s: -bu is required and nothing follows the flags\n", cmd)
		return 2
	}
	if *token == "" {
		cfg, err := config.Load(getenv)
		if err != nil {
			fmt.Fprintf(stderr, "automation: configuration:\n%v\n", err)
			return 2
		}
		*token = cfg.APIToken
	}
	u := *base + "/api/preferences/recipients/" + url.PathEscape(recipient)
	method := http.MethodGet
	var body []byte
	switch {
	case cmd == "put":
		if *file == "" || *op == "" {
			fmt.Fprintln(stderr, "automation preferences put: -file and -operator are required")
			return 2
		}
		b, err := os.ReadFile(*file)
		if err != nil || !json.Valid(b) {
			fmt.Fprintf(stderr, "automation preferences put: %s is not a JSON file (%v)\n", *file, err)
			return 2
		}
		method, body = http.MethodPut, b
	case cmd == "quiet-hours":
		u = *base + "/api/preferences/quiet-hours"
		switch {
		case *del:
			method = http.MethodDelete
		case *start != "" || *end != "" || *zone != "":
			method = http.MethodPut
			body, _ = json.Marshal(map[string]string{"start": *start, "end": *end, "timeZoneId": *zone})
		}
		if method != http.MethodGet && *op == "" {
			fmt.Fprintln(stderr, "automation preferences quiet-hours: -operator is required to change the window")
			return 2
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u+"?"+url.Values{"businessUnitId": {*bu}}.Encode(), bytes.NewReader(body))
	if err != nil {
		fmt.Fprintf(stderr, "automation preferences: %v\n", err)
		return 2
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if *op != "" {
		req.Header.Set("X-Automation-Operator", *op)
	}
	if *token != "" {
		req.Header.Set("Authorization", "Bearer "+*token)
	}
	if *fnKey != "" {
		req.Header.Set("x-functions-key", *fnKey)
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "automation preferences: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		fmt.Fprintf(stderr, "automation preferences %s: %s\n%s\n", cmd, resp.Status, out)
		return 1
	}
	_, _ = stdout.Write(out)
	return 0
}
