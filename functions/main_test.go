package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRunCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"start":"2026-01-01T00:00:00Z","until":"2026-02-01T00:00:00Z","tick":"30s","speed":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []cliCase{
		{"no command", nil, 2, "", "usage", nil},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`, nil},
		{"help", []string{"help"}, 0, "replay", "", nil},
		{"replay without file", []string{"replay"}, 2, "", "usage: automation replay", nil},
		{"missing file", []string{"replay", filepath.Join(dir, "nope.json")}, 2, "", "no such file", nil},
		{"bad scenario", []string{"replay", bad}, 2, "", "speed", nil},
		{"realistic scenario", []string{"replay", "-db", filepath.Join(dir, "keep"), "../testdata/scenarios/realistic.json"}, 0, `"kind":"summary"`, "", func(t *testing.T, _ string) {
			if _, err := os.Stat(filepath.Join(dir, "keep", "automation.db")); err != nil {
				t.Fatalf("-db must keep the database: %v", err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
