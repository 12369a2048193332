package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget/billingsim"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/simhttp"
)

// balanceFlags collects -balance businessUnitId:CURRENCY:minorUnits.
type balanceFlags []string

func (b *balanceFlags) String() string { return strings.Join(*b, ",") }

func (b *balanceFlags) Set(v string) error {
	parts := strings.Split(v, ":")
	if len(parts) != 3 || parts[0] == "" {
		return errors.New("want businessUnitId:CURRENCY:minorUnits")
	}
	if _, err := money.ParseCurrency(parts[1]); err != nil {
		return err
	}
	if _, err := money.ParseMinor("balance", parts[2]); err != nil {
		return err
	}
	*b = append(*b, v)
	return nil
}

// billingSimCmd serves the simulated billing provider (shared/budget/billingsim) on a loopback
// address until ctx ends: `automation billing-sim -addr 127.0.0.1:8089 -balance bu-1:USD:100000`.
// It prints "billing-sim listening on http://ADDR" once it accepts connections.
func billingSimCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("billing-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", billingSimAddr, "loopback address to listen on")
	var balances balanceFlags
	fs.Var(&balances, "balance", "a starting balance, businessUnitId:CURRENCY:minorUnits (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fmt.Fprintf(stderr, "automation billing-sim: -addr %q must be a loopback address (127.0.0.1:PORT)\n", *addr)
		return 2
	}
	sim := billingsim.New(automation.SystemClock{})
	for _, b := range balances {
		parts := strings.Split(b, ":")
		v, _ := strconv.ParseInt(parts[2], 10, 64)
		sim.SetBalance(parts[0], parts[1], money.Minor(v))
	}
	var l simhttp.Listener
	if err := l.Serve(*addr, sim); err != nil {
		fmt.Fprintf(stderr, "automation billing-sim: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "billing-sim listening on %s\n", l.URL())
	<-ctx.Done()
	_ = l.Close()
	return 0
}
