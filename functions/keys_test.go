package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
)

// automation keys create|list|revoke|rotate on the configured SQLite store: the key is
// printed once and then works; list never shows it; revoke ends it; rotate prints a
// successor while the old key keeps working for the overlap. Bad input exits 2 and stores
// nothing.
func TestKeysCommand(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"AUTOMATION_DATA_DIR": dir, "USER": "ana"}
	getenv := func(k string) string { return env[k] }
	cli := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append([]string{"keys"}, args...), getenv, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	for _, bad := range [][]string{
		{"create", "-name", "pos", "-role", "root", "-units", "bu-a"},
		{"create", "-name", "pos", "-role", "ingest", "-units", "bu-a,*"},
		{"create", "-role", "ingest", "-units", "bu-a"},
		{"revoke"},
		{"frobnicate"},
	} {
		if code, _, _ := cli(bad...); code != 2 {
			t.Errorf("%q: exit %d, want 2", bad, code)
		}
	}
	// Help is an answer, not a usage error: the usage on stdout, exit 0.
	for _, h := range []string{"-h", "--help", "help"} {
		if code, out, errOut := cli(h); code != 0 || !strings.Contains(out, "usage: automation keys") || errOut != "" {
			t.Errorf("keys %s: exit %d, stdout %q, stderr %q; want the usage on stdout and 0", h, code, out, errOut)
		}
	}
	code, out, errOut := cli("create", "-name", "pos-sydney", "-role", "ingest", "-units", "bu-syd,bu-hcm")
	if code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	key := strings.SplitN(out, "\n", 2)[0]
	prefix, ok := apikey.PrefixOf(key)
	if !ok || !strings.Contains(out, "roles ingest, units bu-hcm,bu-syd") {
		t.Fatalf("create printed %q", out)
	}
	check := func(k string) error {
		st, err := app.OpenStore(context.Background(), config.Config{DataDir: dir}, false)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		_, err = (&apikey.Service{Store: st, Clock: automation.SystemClock{}}).Authenticate(context.Background(), k)
		return err
	}
	if err := check(key); err != nil {
		t.Fatalf("the created key: %v", err)
	}
	code, out, _ = cli("list")
	if code != 0 || !strings.Contains(out, prefix) || !strings.Contains(out, "pos-sydney") || strings.Contains(out, key[16:]) {
		t.Fatalf("list: %d %q", code, out)
	}
	code, out, _ = cli("rotate", "-overlap", "1h", prefix)
	if code != 0 || !strings.Contains(out, "works until") {
		t.Fatalf("rotate: %d %q", code, out)
	}
	next := strings.SplitN(out, "\n", 2)[0]
	if err := check(key); err != nil {
		t.Fatalf("the old key during the overlap: %v", err)
	}
	if err := check(next); err != nil {
		t.Fatalf("the successor: %v", err)
	}
	nextPrefix, _ := apikey.PrefixOf(next)
	if code, out, _ = cli("revoke", "-operator", "bob", nextPrefix); code != 0 || !strings.Contains(out, "revoked "+nextPrefix) {
		t.Fatalf("revoke: %d %q", code, out)
	}
	if err := check(next); err == nil {
		t.Fatal("a revoked key still works")
	}
	code, out, _ = cli("list", "-json")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, `"revokedBy":"cli:bob"`) || !strings.Contains(out, `"createdBy":"cli:ana"`) {
		t.Fatalf("list -json: %d %q", code, out)
	}
	if code, _, _ = cli("revoke", "ffffffffffff"); code != 2 {
		t.Fatalf("revoke of an unknown prefix: exit %d", code)
	}
}
