package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestSimCommand: the flags reach the simulator (seeds from -seed, the fault kinds), the
// summary names the rate, the faults and the invariants; bad flags are usage errors.
func TestSimCommand(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		code     int
		inOut    string
		inStderr string
	}{
		{"two seeds", []string{"sim", "-seed", "5", "-seeds", "2", "-faults", "lease,restart", "-workers", "1"}, 0, "sim: 2 seeds in", ""},
		{"one seed", []string{"sim", "-seed", "3"}, 0, "sim: 1 seeds from 3, faults all", ""},
		{"unknown fault", []string{"sim", "-faults", "meteor"}, 2, "", "unknown fault kind"},
		{"negative", []string{"sim", "-seeds", "-1"}, 2, "", "positive"},
		{"argument", []string{"sim", "extra"}, 2, "", "usage: automation sim"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tc.args, func(string) string { return "" }, &out, &errOut)
			if code != tc.code || !strings.Contains(out.String(), tc.inOut) || !strings.Contains(errOut.String(), tc.inStderr) {
				t.Fatalf("code %d\nstdout %s\nstderr %s", code, out.String(), errOut.String())
			}
			if tc.code == 0 && !strings.Contains(out.String(), "invariants checked") {
				t.Fatalf("no invariant counts:\n%s", out.String())
			}
		})
	}
}
