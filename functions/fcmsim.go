package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/automation-platform/automation/shared/delivery/fcmsim"
)

// fcmSimAddr is the simulated FCM's default address, apart from the other simulators.
const fcmSimAddr = "127.0.0.1:8090"

// fcmsimCmd runs the simulated Firebase Cloud Messaging server (docs/channels.md#simulators)
// until ctx ends: `automation fcm-sim [-addr 127.0.0.1:8090] [-project sim-project]
// -key-file sa.json [-mode …]`. It writes the service-account key file whose token_uri is
// its own /token to -key-file (mode 0600) and prints its base URL on stdout; then
//
//	AUTOMATION_FCM_CREDENTIALS="$(cat sa.json)" AUTOMATION_FCM_ENDPOINT=<url> automation serve
//
// pushes to it. Faults can be switched later with PUT {url}/faults; GET {url}/messages
// lists what was accepted. Exit codes: 0 stopped, 1 could not listen or write the key file,
// 2 bad flags.
func fcmsimCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := simFlagSet("fcm-sim", fcmSimAddr, "fault mode for every send: slow, timeout, rate-limit, unavailable, internal, unregistered, invalid-token or lose-answer",
		"delay of slow and timeout (a Go duration)", stderr)
	project := fs.String("project", "sim-project", "the simulated Firebase project id")
	keyFile := fs.String("key-file", "", "where to write the service-account key file (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *keyFile == "" {
		fmt.Fprintln(stderr, "automation fcm-sim: -key-file is required and takes no arguments")
		return 2
	}
	s, err := fcmsim.New(fcmsim.Config{ProjectID: *project})
	if err != nil {
		fmt.Fprintf(stderr, "automation fcm-sim: %v\n", err)
		return 1
	}
	return serveSim(ctx, "fcm-sim", s, func() error { return s.SetFaults(fcmsim.Faults{Mode: *f.mode, Delay: *f.delay}) }, *f.addr,
		func(url string) error {
			if err := os.WriteFile(*keyFile, s.ServiceAccountJSON(url), 0o600); err != nil {
				return fmt.Errorf("key file: %w", err)
			}
			return nil
		}, stdout, stderr)
}
