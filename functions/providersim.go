package main

import (
	"context"
	"fmt"
	"io"

	"github.com/automation-platform/automation/shared/campaign/providersim"
)

// Default addresses of the two simulators: apart, so both run beside a serve at once.
const (
	providerSimAddr = "127.0.0.1:8088"
	billingSimAddr  = "127.0.0.1:8089"
)

// providersimCmd runs the simulated campaign action provider (docs/campaigns.md#simulated-provider)
// until ctx ends: `automation provider-sim [-addr 127.0.0.1:8088] [-dedupe] [-lookup]
// [-mode flaky -fail-percent 20 -lose-percent 10 | -mode slow -delay 2s]`. It prints its
// base URL on stdout; faults can be switched later with PUT {url}/faults. Exit codes: 0
// stopped, 1 could not listen, 2 bad flags.
func providersimCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := simFlagSet("provider-sim", providerSimAddr, "fault mode: slow, timeout-after-apply, fail, lose-answer or flaky",
		"delay of slow and timeout-after-apply (a Go duration)", stderr)
	dedupe := fs.Bool("dedupe", false, "deduplicate by Idempotency-Key")
	lookup := fs.Bool("lookup", false, "answer GET /actions/{key}")
	failPct := fs.Int("fail-percent", 0, "flaky: share of calls that fail")
	losePct := fs.Int("lose-percent", 0, "flaky: share of calls whose answer is lost")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "automation provider-sim: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	s := providersim.New(providersim.Config{Dedupe: *dedupe, Lookup: *lookup})
	return serveSim(ctx, "provider-sim", s, func() error {
		return s.SetFaults(providersim.Faults{Mode: *f.mode, Delay: *f.delay, FailPercent: *failPct, LosePercent: *losePct})
	}, *f.addr, nil, stdout, stderr)
}
