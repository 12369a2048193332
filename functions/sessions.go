package main

import (
	"context"
	"fmt"
	"io"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/session"
)

const sessionsUsage = `usage: automation sessions end PRINCIPAL

  end PRINCIPAL   end every live console session of PRINCIPAL at once (oidc:jane,
                  key:support-desk, bootstrap); their next request finds no session

The store is the configured one (AUTOMATION_DATA_DIR, or AUTOMATION_SQLSERVER_DSN once
"automation migrate" ran). The admin API POST /api/console-sessions/end does the same over
HTTP (docs/security.md#sessions).
`

// sessionsCmd ends console sessions straight in the configured store.
func sessionsCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stdout, sessionsUsage)
		return 0
	}
	if len(args) != 2 || args[0] != "end" {
		fmt.Fprint(stderr, sessionsUsage)
		return 2
	}
	st, code := openStore(ctx, "sessions", getenv, stderr)
	if st == nil {
		return code
	}
	defer st.Close()
	res, err := (&session.Admin{Store: st, Clock: automation.SystemClock{}}).EndPrincipal(ctx, args[1])
	if err != nil {
		return refused(stderr, "sessions end", err)
	}
	fmt.Fprintf(stdout, "ended %d live console session(s) of %s\n", res.Ended, res.Principal)
	return 0
}
