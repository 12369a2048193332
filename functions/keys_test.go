package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/store"
)

// automation keys create|list|revoke|rotate on the configured SQLite store: the key is
// printed once and then works; list never shows it; revoke ends it; rotate prints a
// successor while the old key keeps working for the overlap. Bad input exits 2 and stores
// nothing.
func TestKeysCommand(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"AUTOMATION_DATA_DIR": dir, "USER": "ana"}
	getenv := func(k string) string { return env[k] }
	cli := cliOf(getenv, "keys")
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

// `automation keys` names the store it opens (stderr); list, revoke and rotate on a store
// file that does not exist yet are refused naming its path, and leave no store behind (a
// missing AUTOMATION_DATA_DIR used to list a fresh, empty store); create with units this store
// does not hold warns naming them and still issues the key.
func TestKeysCommandNamesItsStoreAndWarnsOfUnknownUnits(t *testing.T) {
	dir := t.TempDir() + "/nowhere"
	env := map[string]string{"AUTOMATION_DATA_DIR": dir, "USER": "ana"}
	getenv := func(k string) string { return env[k] }
	cli := cliOf(getenv, "keys")
	path := dir + "/automation.db"
	for _, args := range [][]string{{"list"}, {"revoke", "abcd"}, {"rotate", "abcd"}} {
		code, out, errOut := cli(args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "no store at "+path) {
			t.Errorf("%q on a missing store: exit %d, stdout %q, stderr %q; want 2 naming %s", args, code, out, errOut, path)
		}
		if _, err := os.Stat(path); err == nil {
			t.Fatalf("%q created the store %s", args, path)
		}
	}
	code, out, errOut := cli("create", "-name", "pos-sydney", "-role", "ingest", "-units", "bu-syd,bu-demo")
	if code != 0 || !strings.Contains(out, "prefix ") {
		t.Fatalf("create: exit %d, %q %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "store "+path) || !strings.Contains(errOut, "warning: no business unit bu-demo, bu-syd") {
		t.Errorf("create's stderr %q: want the store's path and a warning naming bu-demo, bu-syd", errOut)
	}
	st, err := app.OpenStore(context.Background(), config.Config{DataDir: dir}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.BusinessUnitUpsert(context.Background(), store.BusinessUnit{ID: "bu-demo", Name: "Demo", TimeZoneID: "UTC"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if code, _, errOut := cli("create", "-name", "pos-demo", "-role", "ingest", "-units", "bu-demo"); code != 0 || strings.Contains(errOut, "warning") {
		t.Errorf("create for an existing unit: exit %d, stderr %q; want no warning", code, errOut)
	}
	if code, _, errOut := cli("create", "-name", "ops", "-role", "read", "-units", "*"); code != 0 || strings.Contains(errOut, "warning") {
		t.Errorf("create for every unit: exit %d, stderr %q; want no warning", code, errOut)
	}
	if code, out, _ := cli("list"); code != 0 || !strings.Contains(out, "pos-sydney") {
		t.Errorf("list on the store: exit %d, %q", code, out)
	}
}
