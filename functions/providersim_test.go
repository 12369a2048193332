package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// `automation provider-sim` (alias providersim) serves the action protocol until stopped; bad flags are exit 2.
func TestProvidersimCommand(t *testing.T) {
	if code := run(context.Background(), []string{"providersim", "-mode", "sometimes"}, nil, io.Discard, io.Discard); code != 2 {
		t.Fatalf("bad mode: exit %d", code)
	}
	url, _, stop := startSim(t, "provider-sim", "-addr", "127.0.0.1:0", "-dedupe", "-lookup")
	req, _ := http.NewRequest("POST", url+"/actions", strings.NewReader(`{}`))
	req.Header.Set("Idempotency-Key", "k1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /actions: %v %v", resp, err)
	}
	resp.Body.Close()
	if resp, err := http.Get(url + "/actions/k1"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("lookup: %v %v", resp, err)
	}
	stop()
}

// The two simulators are named alike, listed in the usage and the command table of
// docs/running.md (moved there from the README), and
// do not share a default address: both run beside a serve at once (issue 33, item 10).
func TestSimulatorsNamedAlikeOnTheirOwnAddresses(t *testing.T) {
	if providerSimAddr == billingSimAddr {
		t.Fatalf("provider-sim and billing-sim both default to %s", providerSimAddr)
	}
	var help strings.Builder
	run(context.Background(), []string{"help"}, nil, &help, io.Discard)
	readme, err := os.ReadFile("../docs/running.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ cmd, addr string }{{"provider-sim", providerSimAddr}, {"billing-sim", billingSimAddr}} {
		if !strings.Contains(help.String(), "  "+c.cmd+" ") || !strings.Contains(help.String(), c.addr) {
			t.Errorf("usage lacks %s on %s:\n%s", c.cmd, c.addr, help.String())
		}
		if !strings.Contains(string(readme), "| `automation "+c.cmd) || !strings.Contains(string(readme), c.addr) {
			t.Errorf("docs/running.md's command table lacks `automation %s` on %s", c.cmd, c.addr)
		}
	}
}
