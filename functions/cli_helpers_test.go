package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// cliOf returns a runner of `automation CMD ARGS... AFTER...` with getenv: each call runs
// the command once and returns its exit code, stdout and stderr.
func cliOf(getenv func(string) string, cmd string, after ...string) func(args ...string) (int, string, string) {
	return func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		argv := append(append([]string{cmd}, args...), after...)
		code := run(context.Background(), argv, getenv, &out, &errOut)
		return code, out.String(), errOut.String()
	}
}

// noEnv is a getenv with nothing set.
func noEnv(string) string { return "" }

// cliCase is one row of a table of whole command lines: args (the command first) exits
// with code, its stdout contains inOut and its stderr inStderr; then check, when set, with
// the stdout.
type cliCase struct {
	name     string
	args     []string
	code     int
	inOut    string
	inStderr string
	check    func(t *testing.T, stdout string)
}

// run runs the row with no settings (noEnv) and checks it; a mismatch fails t at once.
func (tc cliCase) run(t *testing.T) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), tc.args, noEnv, &stdout, &stderr)
	out, errOut := stdout.String(), stderr.String()
	if code != tc.code || !strings.Contains(out, tc.inOut) || !strings.Contains(errOut, tc.inStderr) {
		t.Fatalf("code %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if tc.check != nil {
		tc.check(t, out)
	}
}

// startCommand runs `automation ARGS...` (a simulator: it serves until stopped) in the
// background with no settings, its stdout on a pipe: lines reads what it prints. stop
// cancels it and fails t unless it exits 0 within 5 s (what it prints after is dropped).
func startCommand(t *testing.T, args ...string) (lines *bufio.Reader, stop func()) {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, args, nil, pw, io.Discard)
		pw.Close()
	}()
	return bufio.NewReader(pr), func() {
		t.Helper()
		cancel()
		go func() { _, _ = io.Copy(io.Discard, pr) }()
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not stop", args[0])
		}
	}
}

// startSim is startCommand for a simulator whose first line names its base URL (the first
// field starting "http://": provider-sim and fcm-sim print the URL alone, billing-sim and
// otlp-sim a sentence around it); it fails t unless that line comes.
func startSim(t *testing.T, args ...string) (url string, lines *bufio.Reader, stop func()) {
	t.Helper()
	lines, stop = startCommand(t, args...)
	first, err := lines.ReadString('\n')
	if err != nil {
		t.Fatalf("%s printed no address: %q %v", args[0], first, err)
	}
	for _, f := range strings.Fields(first) {
		if strings.HasPrefix(f, "http://") {
			return f, lines, stop
		}
	}
	t.Fatalf("%s printed no address: %q", args[0], first)
	return "", nil, nil
}
