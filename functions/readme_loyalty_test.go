package main

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReadmeLoyaltyTenMinutes runs every shell block of the README's "Loyalty events in ten
// minutes" against a live serve: the first block's serve command (its flags, run in this
// process with the test's data directory and port, and a 1-second OutboxRelay timer instead
// of 10 s), then each curl block with bash, on the test's port instead of 7071. Each block's
// answer must hold what the README shows; a block whose answer comes after a relay tick is
// retried for up to 30 s. serve's log must show the login's trigger event and the Direct
// event as the rule engine would receive them.
func TestReadmeLoyaltyTenMinutes(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the README's commands use it")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	i := strings.Index(text, "\n## Loyalty events in ten minutes\n")
	if i < 0 {
		t.Fatal(`README has no "## Loyalty events in ten minutes" section`)
	}
	section := text[i+1:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1)
	// What each block's answer must contain, in order (the first block is serve).
	want := []string{
		"",
		`{"businessUnitId":"bu-hcm","campaignId":"first-login-welcome","runId":"run-1","name":"First login welcome","status":"ACTIVE"`,
		`"id":"try-login-1","type":"Login","status":"accepted","routes":["events","tracking"]`,
		`{"attribute":"first_login","type":"boolean","value":true`,
		`"recipientId":"CUST-HCM-8","template":"campaign:first-login-welcome","subject":"Welcome to the club"`,
		`"id":"try-redeem-1","type":"Redeem_Item","status":"accepted","routes":["events","tracking"]`,
		`{"topic":"events","unpublished":0`,
		`"id":"try-scan-1","type":"Voucher_Used","status":"accepted","routes":["noti"]`,
		`"recipientId":"CUST-HCM-9","template":"voucher-used","subject":"Voucher VC-1001 used","text":"Your voucher VC-1001 was used at Pho 24."`,
		`"status":422,"detail":"/data/amount: does not match the registered schema (version 1): minimum: got 0, want 1"`,
	}
	if len(blocks) != len(want) {
		t.Fatalf("the section has %d sh blocks, the test knows %d: update the test with the README", len(blocks), len(want))
	}
	serveCmd := strings.TrimSpace(blocks[0][1])
	prefix := "go run ./functions serve "
	if !strings.HasPrefix(serveCmd, prefix) || strings.Contains(serveCmd, "\n") {
		t.Fatalf("first block %q is not one %q command", serveCmd, prefix)
	}
	// serve runs from the repository root in the README; the test runs in functions/.
	var flags []string
	for _, f := range strings.Fields(strings.TrimPrefix(serveCmd, prefix)) {
		if strings.HasPrefix(f, "testdata/") {
			f = "../" + f
		}
		flags = append(flags, f)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	port := freePort(t)
	dir := t.TempDir()
	getenv := func(k string) string {
		return map[string]string{"AUTOMATION_DATA_DIR": dir, "OutboxRelaySchedule": "*/1 * * * * *"}[k]
	}
	var logs lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "-port", port, "-functions", "."}, flags...), getenv, &lockedBuffer{}, &logs)
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d:\n%s", code, logs.String())
		}
	}()
	base := "http://127.0.0.1:" + port
	waitReady(t, base, done, &logs)
	for n, b := range blocks[1:] {
		script := strings.ReplaceAll(b[1], "http://127.0.0.1:7071", base)
		if !strings.Contains(script, base) {
			t.Fatalf("block %d does not call http://127.0.0.1:7071: %s", n+1, b[1])
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			out, err := exec.Command("bash", "-euo", "pipefail", "-c", script).CombinedOutput()
			if err == nil && strings.Contains(string(out), want[n+1]) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("block %d:\n%s\nanswered (%v):\n%s\nwant it to contain %s\nserve log:\n%s", n+1, b[1], err, out, want[n+1], logs.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// The login's trigger event (its id is a function of the login's id, the customer and the
	// attribute) and the redemption's Direct event, as the rule engine would receive them.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), `"destination":"events","messageId":"attr-gen-6d4feb8403ff697a31ab6fca:events","sessionId":"CUST-HCM-8","payload":"{\"event_id\":\"attr-gen-6d4feb8403ff697a31ab6fca\",\"event_name\":\"First_Login_Reward\"`); {
		if time.Now().After(deadline) {
			t.Fatalf("serve's log never showed the trigger event:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), `"destination":"events","messageId":"try-redeem-1:events","sessionId":"CUST-SYD-9"`); {
		if time.Now().After(deadline) {
			t.Fatalf("serve's log never showed the Direct event:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitReady(t *testing.T, base string, done chan int, logs *lockedBuffer) {
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
