package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/session"
	"github.com/automation-platform/automation/shared/store"
)

// automation sessions end PRINCIPAL ends that principal's live console sessions in the
// configured store, and no one else's; bad input exits 2 and ends nothing.
func TestSessionsCommand(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"AUTOMATION_DATA_DIR": dir}
	getenv := func(k string) string { return env[k] }
	cli := cliOf(getenv, "sessions")
	ctx := context.Background()
	st, err := app.OpenStore(ctx, config.Config{DataDir: dir}, false)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i, p := range []string{"oidc:jane", "oidc:jane", "oidc:ana"} {
		if err := st.ConsoleSessionInsert(ctx, store.ConsoleSession{SessionHash: session.Hash(string(rune('a' + i))), Principal: p,
			CreatedOn: now, LastSeenOn: now, ExpiresOn: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	for _, bad := range [][]string{{}, {"end"}, {"end", " "}, {"stop", "oidc:jane"}} {
		if code, _, _ := cli(bad...); code != 2 {
			t.Errorf("%q: exit %d, want 2", bad, code)
		}
	}
	if code, out, errOut := cli("-h"); code != 0 || !strings.Contains(out, "usage: automation sessions") || errOut != "" {
		t.Errorf("-h: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := cli("end", "oidc:jane"); code != 0 || !strings.Contains(out, "ended 2 live console session(s) of oidc:jane") {
		t.Fatalf("end: %d %q %q", code, out, errOut)
	}
	st, err = app.OpenStore(ctx, config.Config{DataDir: dir}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, want := range []string{session.ReasonAdmin, session.ReasonAdmin, ""} {
		if s, err := st.ConsoleSessionGet(ctx, session.Hash(string(rune('a'+i)))); err != nil || s.EndReason != want {
			t.Errorf("session %d: %+v %v, want end reason %q", i, s, err, want)
		}
	}
}
