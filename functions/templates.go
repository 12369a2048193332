package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
)

var templatesUsage = `usage: automation templates <command> KEY -bu ID [flags]

The notification templates from a terminal (a running serve, or the Function App's
TemplatesApi; docs/channels.md#templates). Prints the API's JSON answer.

commands:
  get      KEY -bu ID                          the template the unit's deliveries render
  put      KEY -bu ID -file T.json -operator N  save the unit's next version ({"kind","subject","text","html",
                                                 "data","whatsApp"}; docs/channels.md#template-kinds);
                                                 -version V: the version you read (If-Match); none for the first
  delete   KEY -bu ID -version V -operator N    delete the unit's own template (its deliveries render the
                                                 default again); -version is the live version (If-Match)
  preview  KEY -bu ID [-payload P.json] [-sms]  render the latest version against a sample payload
  test-send KEY -bu ID -channel C -recipient R -operator N [-payload P.json]
                                                 send it once, as a test delivery, to one recipient

` + apiFlagsUsage("TemplatesApi")

// templatesCmd runs `automation templates ...`.
func templatesCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if code, ok := usageAsked(args, templatesUsage, stdout); ok {
		return code
	}
	cmd := args[0]
	fs, api := apiFlagSet("templates "+cmd, templatesUsage, stderr)
	bu := fs.String("bu", "", "")
	file := fs.String("file", "", "")
	op := fs.String("operator", "", "")
	version := fs.Int64("version", 0, "")
	payload := fs.String("payload", "", "")
	sms := fs.Bool("sms", false, "")
	chName := fs.String("channel", "", "")
	recipient := fs.String("recipient", "", "")
	if cmd != "get" && cmd != "put" && cmd != "delete" && cmd != "preview" && cmd != "test-send" {
		fmt.Fprintf(stderr, "automation templates: unknown command %q\n\n%s", cmd, templatesUsage)
		return 2
	}
	// The key comes first (flag parsing stops at the first argument).
	if len(args) < 2 || len(args[1]) == 0 || args[1][0] == '-' {
		fmt.Fprintf(stderr, "automation templates %s: the template KEY comes first\n", cmd)
		return 2
	}
	key := args[1]
	if !api.parseUnitCommand(fs, args[2:], bu, "automation templates "+cmd, getenv, stderr) {
		return 2
	}
	u := *api.base + "/api/templates/" + url.PathEscape(key)
	q := url.Values{"businessUnitId": {*bu}}
	var body []byte
	method := http.MethodGet
	headers := http.Header{}
	switch cmd {
	case "put":
		if *file == "" || *op == "" {
			fmt.Fprintln(stderr, "automation templates put: -file and -operator are required")
			return 2
		}
		b, err := os.ReadFile(*file)
		if err != nil {
			fmt.Fprintf(stderr, "automation templates put: %v\n", err)
			return 2
		}
		method, body = http.MethodPut, b
		headers.Set("X-Automation-Operator", *op)
		if *version > 0 {
			headers.Set("If-Match", `"`+strconv.FormatInt(*version, 10)+`"`)
		}
	case "delete":
		if *op == "" || *version <= 0 {
			fmt.Fprintln(stderr, "automation templates delete: -operator and -version (the live version, from get) are required")
			return 2
		}
		method = http.MethodDelete
		headers.Set("X-Automation-Operator", *op)
		headers.Set("If-Match", `"`+strconv.FormatInt(*version, 10)+`"`)
	case "preview", "test-send":
		p := []byte("{}")
		if *payload != "" {
			b, err := os.ReadFile(*payload)
			if err != nil {
				fmt.Fprintf(stderr, "automation templates %s: %v\n", cmd, err)
				return 2
			}
			p = b
		}
		if !json.Valid(p) {
			fmt.Fprintf(stderr, "automation templates %s: the payload file is not JSON\n", cmd)
			return 2
		}
		if cmd == "preview" {
			method, u = http.MethodPost, u+"/preview"
			body, _ = json.Marshal(map[string]json.RawMessage{"payload": p})
			if *sms {
				q.Set("channel", "sms")
			}
			break
		}
		if *chName == "" || *recipient == "" || *op == "" {
			fmt.Fprintln(stderr, "automation templates test-send: -channel, -recipient and -operator are required")
			return 2
		}
		method, u = http.MethodPost, u+"/test-send"
		body, _ = json.Marshal(map[string]any{"channel": *chName, "recipient": *recipient, "payload": json.RawMessage(p)})
		headers.Set("X-Automation-Operator", *op)
	}
	return api.do(ctx, "automation templates", cmd, apiRequest{method: method, target: u + "?" + q.Encode(), header: headers, body: body}, true, stdout, stderr)
}
