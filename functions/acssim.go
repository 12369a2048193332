package main

import (
	"context"
	"io"

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
	return fileSim{name: "acs-sim", addr: acsSimAddr, modeHelp: "fault mode for every send: slow, timeout, rate-limit, internal or lose-answer",
		fileFlag: "connection-file", fileHelp: "where to write the connection string (required)", fileWhat: "connection file",
		open: func(f simFlags) (simServer, func() error, func(string) []byte, error) {
			s, err := acssim.New(acssim.Config{})
			if err != nil {
				return nil, nil, nil, err
			}
			return s, func() error { return s.SetFaults(acssim.Faults{Mode: *f.mode, Delay: *f.delay}) },
				func(url string) []byte { return []byte(s.ConnectionString(url)) }, nil
		}}.run(ctx, args, stdout, stderr)
}
