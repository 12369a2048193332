package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/logsink"
)

// readmeSection is one section of the README or of a guide under docs/ whose shell blocks a
// test runs against a live serve.
type readmeSection struct {
	// File is the Markdown file, relative to the repository root ("README.md" when empty;
	// the longer walk-throughs moved to docs/ with their tests).
	File string
	// Heading is the section's "## " or "### " heading line without the hashes.
	Heading string
	// Want holds, per sh block in order, what its answer must contain (several parts, each
	// required, joined by all); the first block starts serve and wants "". A block whose
	// answer comes after a timer tick is retried.
	Want []string
	// Env is serve's environment beyond the test's data directory (e.g. a faster timer).
	Env map[string]string
	// After, when set, is called after block n ran (n counts from 0, the serve block) with
	// serve's stdout and log so far; it may wait for what the README says shows there.
	After func(t *testing.T, n int, stdout, logs *logsink.Buffer)
	// Timeout bounds the retries of one block (default 30 s).
	Timeout time.Duration
}

var (
	readmeBinOnce sync.Once
	readmeBin     string
	readmeBinErr  error
)

// automationBinary builds the automation binary once per test process (what `make build`
// puts in bin/automation) and returns its path.
func automationBinary(t *testing.T) string {
	t.Helper()
	readmeBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "readme-bin-")
		if err != nil {
			readmeBinErr = err
			return
		}
		readmeBin = filepath.Join(dir, "automation")
		if out, err := exec.Command("go", "build", "-o", readmeBin, ".").CombinedOutput(); err != nil {
			readmeBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if readmeBinErr != nil {
		t.Fatal(readmeBinErr)
	}
	return readmeBin
}

// runReadmeSection runs every shell block of one section (of the README, or of sec.File)
// against a live serve, as a reader would from the repository root in two terminals:
//
//   - the first block starts serve: one `go run ./functions serve …` or `bin/automation
//     serve …` line, maybe after VAR=value assignments (a `make build` line is what the
//     test's own build does, an `rm -rf .data/…` line what its empty data directory does);
//     its flags run in this process with the test's data directory and port;
//   - each later block runs with bash from the repository root, with the test's port
//     instead of 7071 (`bin/automation support` commands get `-url` of it) and
//     `bin/automation` replaced by the test's build of it; its combined
//     output must contain the block's Want, retried until Timeout for answers that wait for a
//     timer tick.
//
// A block must call serve (127.0.0.1:7071 or localhost:7071) or bin/automation, so a new
// block cannot slip in untested.
func runReadmeSection(t *testing.T, sec readmeSection) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the README's commands use it")
	}
	if sec.File == "" {
		sec.File = "README.md"
	}
	readme, err := os.ReadFile("../" + sec.File)
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	var section string
	for _, level := range []string{"## ", "### "} {
		if i := strings.Index(text, "\n"+level+sec.Heading+"\n"); i >= 0 {
			section = text[i+1:]
			if j := regexp.MustCompile(`\n#{2,` + string(rune('0'+len(level)-1)) + `} `).FindStringIndex(section[len(level):]); j != nil {
				section = section[:j[0]+len(level)]
			}
			break
		}
	}
	if section == "" {
		t.Fatalf("%s has no section %q", sec.File, sec.Heading)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) != len(sec.Want) {
		t.Fatalf("section %q has %d sh blocks, the test knows %d: update the test with %s", sec.Heading, len(blocks), len(sec.Want), sec.File)
	}
	var serveLine string
	for _, l := range strings.Split(strings.TrimSpace(blocks[0][1]), "\n") {
		l = strings.TrimSpace(l)
		// Leading VAR=value assignments: AUTOMATION_DATA_DIR is the test's; others are serve's.
		for f := strings.Fields(l); len(f) > 1 && regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=\S*$`).MatchString(f[0]); f = f[1:] {
			k, v, _ := strings.Cut(f[0], "=")
			if k != "AUTOMATION_DATA_DIR" {
				if sec.Env == nil {
					sec.Env = map[string]string{}
				}
				if _, set := sec.Env[k]; !set {
					sec.Env[k] = v
				}
			}
			l = strings.Join(f[1:], " ")
		}
		switch {
		case l == "make build" || l == "" || strings.HasPrefix(l, "rm -rf .data/"):
			// The test builds its own binary and starts from its own empty data directory.
		case serveLine == "" && (strings.HasPrefix(l, "go run ./functions serve") || strings.HasPrefix(l, "bin/automation serve")):
			serveLine = l
		default:
			t.Fatalf("first block: %q is neither `make build`, `rm -rf .data/…` nor the one serve command", l)
		}
	}
	if serveLine == "" {
		t.Fatalf("first block %q starts no serve", blocks[0][1])
	}
	// serve runs from the repository root in the README; the test runs in functions/.
	var flags []string
	fields := strings.Fields(serveLine)
	for i, f := range fields {
		if f == "serve" {
			fields = fields[i+1:]
			break
		}
	}
	for _, f := range fields {
		if strings.HasPrefix(f, "testdata/") {
			f = "../" + f
		}
		flags = append(flags, f)
	}
	bin := ""
	for _, b := range blocks[1:] {
		if strings.Contains(b[1], "bin/automation") {
			bin = automationBinary(t)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	port := freePort(t)
	dir := t.TempDir()
	getenv := func(k string) string {
		if k == "AUTOMATION_DATA_DIR" {
			return dir
		}
		return sec.Env[k]
	}
	var stdout, logs logsink.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "-port", port, "-functions", "."}, flags...), getenv, &stdout, &logs)
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d:\n%s", code, logs.String())
		}
	}()
	base := "http://127.0.0.1:" + port
	waitReady(t, base, done, &logs)
	if sec.After != nil {
		sec.After(t, 0, &stdout, &logs)
	}
	timeout := sec.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	for n, b := range blocks[1:] {
		script := strings.NewReplacer("http://127.0.0.1:7071", base, "localhost:7071", "127.0.0.1:"+port).Replace(b[1])
		if bin != "" {
			// `support` talks to 127.0.0.1:7071 unless told: the test's serve is elsewhere.
			script = regexp.MustCompile(`(^|[\s;&|(])bin/automation support ([a-z-]+)`).ReplaceAllString(script, "${1}bin/automation support ${2} -url "+base)
			script = regexp.MustCompile(`(^|[\s;&|(])bin/automation\b`).ReplaceAllString(script, "${1}"+bin)
		}
		if !strings.Contains(script, "127.0.0.1:"+port) && (bin == "" || !strings.Contains(script, bin)) {
			t.Fatalf("block %d calls neither serve nor bin/automation: %s", n+1, b[1])
		}
		deadline := time.Now().Add(timeout)
		for {
			cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
			cmd.Dir = ".."
			cmd.Env = append(os.Environ(), "AUTOMATION_API_TOKEN=")
			out, err := cmd.CombinedOutput()
			if err == nil && containsAll(string(out), sec.Want[n+1]) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("block %d:\n%s\nanswered (%v):\n%s\nwant it to contain %s\nserve log:\n%s", n+1, b[1], err, out, sec.Want[n+1], logs.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
		if sec.After != nil {
			sec.After(t, n+1, &stdout, &logs)
		}
	}
}

// all joins the parts a block's answer must each contain (readmeSection.Want).
func all(parts ...string) string { return strings.Join(parts, "\x00") }

func containsAll(out, want string) bool {
	for _, p := range strings.Split(want, "\x00") {
		if !strings.Contains(out, p) {
			return false
		}
	}
	return true
}

// waitFor waits up to d for buf to contain s.
func waitFor(t *testing.T, what string, buf, logs *logsink.Buffer, s string, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); !strings.Contains(buf.String(), s); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never showed %s within %s:\n%s\nserve log:\n%s", what, s, d, buf.String(), logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitReady(t *testing.T, base string, done chan int, logs *logsink.Buffer) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; {
		if out, err := exec.Command("curl", "-sf", base+"/").CombinedOutput(); err == nil {
			_ = out
			return
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("serve exited %d before it was ready:\n%s", code, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
