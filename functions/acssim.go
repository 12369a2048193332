package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/automation-platform/automation/shared/delivery/acssim"
)

// acsSimAddr is the simulated ACS's default address, apart from the other simulators.
const acsSimAddr = "127.0.0.1:8091"

// acssimCmd runs the simulated Azure Communication Services server (SMS and WhatsApp;
// docs/channels.md#simulators) until ctx ends: `automation acs-sim [-addr 127.0.0.1:8091]
// -connection-file acs.txt [-mode …]`. It writes the resource's connection string (its URL
// and a fresh access key) to -connection-file (mode 0600) and prints its base URL on stdout;
// then
//
//	AUTOMATION_ACS_CONNECTION_STRING="$(cat acs.txt)" AUTOMATION_SMS_FROM=+15550100 automation serve
//
// sends SMS to it. Faults can be switched later with PUT {url}/faults; GET {url}/messages
// lists what was sent. Exit codes: 0 stopped, 1 could not listen or write the file, 2 bad
// flags.
func acssimCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := simFlagSet("acs-sim", acsSimAddr, "fault mode for every send: slow, timeout, rate-limit, internal or lose-answer",
		"delay of slow and timeout (a Go duration)", stderr)
	file := fs.String("connection-file", "", "where to write the connection string (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *file == "" {
		fmt.Fprintln(stderr, "automation acs-sim: -connection-file is required and takes no arguments")
		return 2
	}
	s, err := acssim.New(acssim.Config{})
	if err != nil {
		fmt.Fprintf(stderr, "automation acs-sim: %v\n", err)
		return 1
	}
	return serveSim(ctx, "acs-sim", s, func() error { return s.SetFaults(acssim.Faults{Mode: *f.mode, Delay: *f.delay}) }, *f.addr,
		func(url string) error {
			if err := os.WriteFile(*file, []byte(s.ConnectionString(url)), 0o600); err != nil {
				return fmt.Errorf("connection file: %w", err)
			}
			return nil
		}, stdout, stderr)
}
