package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/logsink"
)

const (
	regLogin = `{"eventType":"Login","class":"DIRECT","schema":{"type":"object"}}`
	regView  = `{"eventType":"ViewItem","class":"COUNTER","schema":{"type":"object","required":["itemId"]},"counterInstructions":[{"attribute_code":"views","entity_type":"CUSTOMER","operation":"INCREMENT"}]}`
	regView2 = `{"eventType":"ViewItem","class":"COUNTER","schema":{"type":"object","required":["itemId","shelf"]},"counterInstructions":[{"attribute_code":"views","entity_type":"CUSTOMER","operation":"INCREMENT"}]}`
)

// serveUntilStopped runs `serve` on dir with flags on a free 127.0.0.1 port and returns its
// base URL and a stop func that cancels it and returns its exit code and stderr; when serve
// exits before it is ready, base is "" and the exit code and stderr are returned at once.
func serveUntilStopped(t *testing.T, dir string, flags ...string) (base string, stop func() (int, string), exited int, stderr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	port := freePort(t)
	getenv := func(k string) string {
		if k == "AUTOMATION_DATA_DIR" {
			return dir
		}
		return ""
	}
	done := make(chan int, 1)
	var logs logsink.Buffer
	go func() {
		done <- run(ctx, append([]string{"serve", "-port", port, "-functions", "."}, flags...), getenv, &logsink.Buffer{}, &logs)
	}()
	base = "http://127.0.0.1:" + port
	for deadline := time.Now().Add(15 * time.Second); ; {
		resp, err := http.Get(base + "/")
		if err == nil {
			resp.Body.Close()
			return base, func() (int, string) { cancel(); return <-done, logs.String() }, 0, ""
		}
		select {
		case code := <-done:
			cancel()
			return "", nil, code, logs.String()
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve not ready: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// registryVersions reads every type's versions over the registry API: type → operators of
// its versions, oldest first.
func registryVersions(t *testing.T, base string) map[string][]string {
	t.Helper()
	resp, err := http.Get(base + "/api/event-registry/types")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Types []struct {
			EventType string `json:"eventType"`
		} `json:"types"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, typ := range list.Types {
		r, err := http.Get(base + "/api/event-registry/types/" + typ.EventType + "/versions")
		if err != nil {
			t.Fatal(err)
		}
		var vs struct {
			Versions []struct {
				Version  int64  `json:"version"`
				Operator string `json:"operator"`
			} `json:"versions"`
		}
		err = json.NewDecoder(r.Body).Decode(&vs)
		r.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs.Versions {
			out[typ.EventType] = append(out[typ.EventType], v.Operator)
		}
	}
	return out
}

// TestServeImportsTheRegistryFile: `serve -registry file.json` imports the file at start
// (version 1 of each type, operator "serve -registry"); a restart with the same file saves
// nothing new, a restart with one definition changed saves a new version of that one only;
// a bad file makes serve exit 2 with a message naming the bad member (or the file).
func TestServeImportsTheRegistryFile(t *testing.T) {
	t.Parallel()
	dir, files := t.TempDir(), t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v1 := write("v1.json", `{"events":[`+regLogin+`,`+regView+`]}`)
	v2 := write("v2.json", `{"events":[`+regLogin+`,`+regView2+`]}`)

	check := func(file string, want map[string]int) {
		t.Helper()
		base, stop, code, stderr := serveUntilStopped(t, dir, "-registry", file)
		if base == "" {
			t.Fatalf("serve -registry %s exited %d:\n%s", file, code, stderr)
		}
		got := registryVersions(t, base)
		if code, _ := stop(); code != 0 {
			t.Fatalf("serve exited %d", code)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: registry %v, want %v versions", filepath.Base(file), got, want)
		}
		for typ, n := range want {
			if len(got[typ]) != n {
				t.Fatalf("%s: %s has versions by %v, want %d", filepath.Base(file), typ, got[typ], n)
			}
			for _, op := range got[typ] {
				if op != "serve -registry" {
					t.Fatalf("%s: operator %q", typ, op)
				}
			}
		}
	}
	check(v1, map[string]int{"Login": 1, "ViewItem": 1})
	check(v1, map[string]int{"Login": 1, "ViewItem": 1}) // a restart with the same file: idempotent
	check(v2, map[string]int{"Login": 1, "ViewItem": 2}) // one definition changed: one new version

	for name, tc := range map[string]struct{ body, inStderr string }{
		"unknown operation": {`{"events":[` + regLogin + `,{"eventType":"Bad","class":"COUNTER","schema":{},"counterInstructions":[{"attribute_code":"a","entity_type":"CUSTOMER","operation":"MULTIPLY"}]}]}`,
			"/events/1/counterInstructions/0/operation"},
		"forbidden reset policy": {`{"events":[{"eventType":"Bad","class":"COUNTER","schema":{},"counterInstructions":[{"attribute_code":"a","entity_type":"CUSTOMER","operation":"SET_TRUE_ONCE","thresholds":[{"value":1,"trigger_event":"T","reset_policy":"RESET_ON_TRIGGER"}]}]}]}`,
			"/events/0/counterInstructions/0/thresholds/0/reset_policy"},
		"invalid schema":   {`{"events":[{"eventType":"Bad","class":"DIRECT","schema":{"type":"nope"}}]}`, "/events/0/schema"},
		"twice":            {`{"events":[` + regLogin + `,` + regLogin + `]}`, "/events/1/eventType"},
		"not a registry":   {`{"types":[]}`, "not a registry file"},
		"not JSON":         {`{"events":[`, "not a registry file"},
		"missing the file": {"", "no such file"},
	} {
		file := filepath.Join(files, "missing.json")
		if tc.body != "" {
			file = write(strings.ReplaceAll(name, " ", "-")+".json", tc.body)
		}
		base, stop, code, stderr := serveUntilStopped(t, dir, "-registry", file)
		if base != "" {
			stop()
			t.Fatalf("%s: serve started with a bad registry file", name)
		}
		if code != 2 || !strings.Contains(stderr, tc.inStderr) {
			t.Errorf("%s: exit %d, want 2 naming %q:\n%s", name, code, tc.inStderr, stderr)
		}
	}
	// The refused files changed nothing.
	check(v2, map[string]int{"Login": 1, "ViewItem": 2})
}

// TestShippedRegistryFileImports: testdata/registry/gateway.json (the registry the gateway
// scenario starts with, for `serve -registry`) imports as version 1 of each of its types.
// That it is the scenario's first registry input, so the two cannot drift apart, is
// shared/replay's TestRegistryFilesAreTheScenarios.
func TestShippedRegistryFileImports(t *testing.T) {
	t.Parallel()
	const file = "../testdata/registry/gateway.json"
	shipped, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(shipped, &doc); err != nil || len(doc.Events) == 0 {
		t.Fatalf("%s: %v (%d definitions)", file, err, len(doc.Events))
	}
	base, stop, code, stderr := serveUntilStopped(t, t.TempDir(), "-registry", file)
	if base == "" {
		t.Fatalf("serve -registry %s exited %d:\n%s", file, code, stderr)
	}
	got := registryVersions(t, base)
	if code, _ := stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	if len(got) != len(doc.Events) {
		t.Fatalf("imported %d types, the file defines %d: %v", len(got), len(doc.Events), got)
	}
	for typ, ops := range got {
		if len(ops) != 1 {
			t.Fatalf("%s: %d versions, want 1", typ, len(ops))
		}
	}
}
