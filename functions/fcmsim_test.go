package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// `automation fcm-sim` writes a service-account key file whose token_uri is its own and
// serves until stopped; without -key-file it is exit 2.
func TestFCMSimCommand(t *testing.T) {
	t.Parallel()
	if code := run(t.Context(), []string{"fcm-sim"}, nil, io.Discard, io.Discard); code != 2 {
		t.Fatalf("without -key-file: exit %d, want 2", code)
	}
	key := filepath.Join(t.TempDir(), "sa.json")
	url, _, stop := startSim(t, "fcm-sim", "-addr", "127.0.0.1:0", "-key-file", key)
	b, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	var sa struct {
		Type     string `json:"type"`
		TokenURI string `json:"token_uri"`
	}
	if err := json.Unmarshal(b, &sa); err != nil || sa.Type != "service_account" || sa.TokenURI != url+"/token" {
		t.Fatalf("key file %s: %+v %v", b, sa, err)
	}
	stop()
}

// `automation acs-sim` without -connection-file, or with an unknown fault mode, is exit 2
// (TestReadmePushAndSMS runs it to the end).
func TestACSSimCommandFlags(t *testing.T) {
	t.Parallel()
	if code := run(t.Context(), []string{"acs-sim"}, nil, io.Discard, io.Discard); code != 2 {
		t.Fatalf("without -connection-file: exit %d, want 2", code)
	}
	f := filepath.Join(t.TempDir(), "acs.txt")
	if code := run(t.Context(), []string{"acs-sim", "-addr", "127.0.0.1:0", "-connection-file", f, "-mode", "bogus"}, nil, io.Discard, io.Discard); code != 2 {
		t.Fatalf("unknown mode: exit %d, want 2", code)
	}
}
