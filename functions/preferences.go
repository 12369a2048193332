package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
)

var preferencesUsage = `usage: automation preferences <command> [RECIPIENT] -bu ID [flags]

Recipient preferences and quiet hours from a terminal (a running serve, or the Function
App's PreferencesApi; docs/channels.md#recipient-preferences). Prints the API's JSON answer.

commands:
  get          RECIPIENT -bu ID                          the recipient's stored preferences and quiet hours
  put          RECIPIENT -bu ID -file P.json -operator N  set them ({"preferences":[{"channel","category","optedIn"}],"quietHours":{…}})
  quiet-hours  -bu ID                                     the unit's window
  quiet-hours  -bu ID -start HH:MM -end HH:MM [-zone Z] -operator N   set it
  quiet-hours  -bu ID -delete -operator N                 remove it

` + apiFlagsUsage("PreferencesApi")

// preferencesCmd runs `automation preferences ...`.
func preferencesCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if code, ok := usageAsked(args, preferencesUsage, stdout); ok {
		return code
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
	fs, api := apiFlagSet("preferences "+cmd, preferencesUsage, stderr)
	bu := fs.String("bu", "", "")
	file := fs.String("file", "", "")
	op := fs.String("operator", "", "")
	start := fs.String("start", "", "")
	end := fs.String("end", "", "")
	zone := fs.String("zone", "", "")
	del := fs.Bool("delete", false, "")
	if !api.parseUnitCommand(fs, rest, bu, "automation preferences "+cmd, getenv, stderr) {
		return 2
	}
	u := *api.base + "/api/preferences/recipients/" + url.PathEscape(recipient)
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
		u = *api.base + "/api/preferences/quiet-hours"
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
	header := http.Header{}
	if *op != "" {
		header.Set("X-Automation-Operator", *op)
	}
	target := u + "?" + url.Values{"businessUnitId": {*bu}}.Encode()
	return api.do(ctx, "automation preferences", cmd, apiRequest{method: method, target: target, header: header, body: body}, false, stdout, stderr)
}
