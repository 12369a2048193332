package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/logsink"
)

// TestReadmePushAndSMS runs docs/channels.md's "Push and SMS at the simulators": the first
// block's simulators (`automation fcm-sim`, `automation acs-sim`, in-process, on free ports,
// their files under the test's directory), the second block's serve with the environment it
// names (each "$(cat FILE)" read from the file the simulator wrote), then every further block
// with bash against them. The simulators' GET /messages must show the push at the device's
// token with the rendered title and the SMS at the number, each once.
func TestReadmePushAndSMS(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the guide's commands use it")
	}
	raw, err := os.ReadFile("../docs/channels.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i := strings.Index(text, "\n### Push and SMS at the simulators\n")
	if i < 0 {
		t.Fatal("docs/channels.md has no section \"Push and SMS at the simulators\"")
	}
	section := text[i+1:]
	if j := regexp.MustCompile(`\n#{2,3} `).FindStringIndex(section[4:]); j != nil {
		section = section[:j[0]+4]
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1)
	want := []string{"", "",
		`"token":"fcm-token-demo-1"`,
		all(`"test":true`, `"status":"Queued"`),
		all(`"token":"fcm-token-demo-1"`, `"title":"Welcome, Linh"`, `"to":"+61412345678"`, `"message":"Your welcome offer is waiting in the app."`),
	}
	if len(blocks) != len(want) {
		t.Fatalf("the section has %d sh blocks, the test knows %d: update the test with docs/channels.md", len(blocks), len(want))
	}
	dir := t.TempDir()
	fcmPort, acsPort, port := freePort(t), freePort(t), freePort(t)
	rewrite := strings.NewReplacer("127.0.0.1:8090", "127.0.0.1:"+fcmPort, "127.0.0.1:8091", "127.0.0.1:"+acsPort,
		"http://127.0.0.1:7071", "http://127.0.0.1:"+port, ".data/", dir+"/")
	ctx, cancel := context.WithCancel(context.Background())
	var exits []chan int
	defer func() {
		cancel()
		for _, e := range exits {
			if code := <-e; code != 0 {
				t.Errorf("a command exited %d", code)
			}
		}
	}()
	start := func(args []string, getenv func(string) string, stdout, stderr io.Writer) {
		e := make(chan int, 1)
		exits = append(exits, e)
		go func() { e <- run(ctx, args, getenv, stdout, stderr) }()
	}
	// Block 0: make build, mkdir, and the simulators in the background.
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(blocks[0][1]), "\n") {
		l = strings.TrimSpace(rewrite.Replace(l))
		switch {
		case l == "make build" || strings.HasPrefix(l, "mkdir -p "):
		case strings.HasPrefix(l, "bin/automation ") && strings.HasSuffix(l, "&"):
			args := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(l, "bin/automation "), "&"))
			if args[0] != "fcm-sim" && args[0] != "acs-sim" {
				t.Fatalf("first block: %q starts no simulator", l)
			}
			for k, a := range args {
				if a == "-key-file" || a == "-connection-file" {
					files = append(files, args[k+1])
				}
			}
			start(args, nil, io.Discard, io.Discard)
		default:
			t.Fatalf("first block: %q is neither `make build`, `mkdir -p`, nor a simulator started in the background", l)
		}
	}
	if len(files) != 2 {
		t.Fatalf("first block: the simulators write %d files, want 2", len(files))
	}
	for _, f := range files {
		deadline := time.Now().Add(10 * time.Second)
		for {
			if b, err := os.ReadFile(f); err == nil && len(b) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s was never written", f)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// Block 1: serve, its environment's "$(cat FILE)" read from the files.
	serveLine := strings.TrimSpace(rewrite.Replace(strings.ReplaceAll(blocks[1][1], "\\\n", " ")))
	k := strings.Index(serveLine, "bin/automation serve")
	if k < 0 || strings.Contains(serveLine[:k], "\n") {
		t.Fatalf("second block %q is not one serve command", blocks[1][1])
	}
	env := map[string]string{"AUTOMATION_DATA_DIR": filepath.Join(dir, "serve")}
	for _, m := range regexp.MustCompile(`([A-Z_][A-Z0-9_]*)=("\$\(cat ([^)]+)\)"|\S+)`).FindAllStringSubmatch(serveLine[:k], -1) {
		v := m[2]
		if m[3] != "" {
			b, err := os.ReadFile(m[3])
			if err != nil {
				t.Fatal(err)
			}
			v = string(b)
		}
		env[m[1]] = v
	}
	if env["AUTOMATION_FCM_CREDENTIALS"] == "" || env["AUTOMATION_ACS_CONNECTION_STRING"] == "" {
		t.Fatalf("serve's environment %v configures neither push nor sms", env)
	}
	if err := os.MkdirAll(env["AUTOMATION_DATA_DIR"], 0o700); err != nil {
		t.Fatal(err)
	}
	var stdout, logs logsink.Buffer
	done := make(chan int, 1)
	exits = append(exits, done)
	go func() {
		done <- run(ctx, append([]string{"serve", "-port", port, "-functions", "."}, strings.Fields(serveLine[k+len("bin/automation serve"):])...),
			func(k string) string { return env[k] }, &stdout, &logs)
	}()
	waitReady(t, "http://127.0.0.1:"+port, done, &logs)
	// The further blocks, with bash; a block whose answer comes after the dispatcher sent is retried.
	for n, b := range blocks[2:] {
		script := rewrite.Replace(b[1])
		deadline := time.Now().Add(30 * time.Second)
		for {
			cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
			cmd.Dir = ".."
			out, err := cmd.CombinedOutput()
			if err == nil && containsAll(string(out), want[n+2]) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("block %d:\n%s\nanswered (%v):\n%s\nwant it to contain %s\nserve log:\n%s", n+2, b[1], err, out, want[n+2], logs.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// Each arrived once: the push and the SMS are one delivery each.
	for _, u := range []string{"http://127.0.0.1:" + fcmPort + "/messages", "http://127.0.0.1:" + acsPort + "/messages"} {
		out, err := exec.Command("curl", "-s", u).Output()
		if err != nil {
			t.Fatal(err)
		}
		if c := strings.Count(string(out), `"to":"+61412345678"`) + strings.Count(string(out), `"token":"fcm-token-demo-1"`); c != 1 {
			t.Errorf("%s lists the message %d times, want once: %s", u, c, out)
		}
	}
}
