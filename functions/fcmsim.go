package main

import (
	"context"
	"flag"
	"io"

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
	var project *string
	return fileSim{name: "fcm-sim", addr: fcmSimAddr,
		modeHelp: "fault mode for every send: slow, timeout, rate-limit, unavailable, internal, unregistered, invalid-token or lose-answer",
		fileFlag: "key-file", fileHelp: "where to write the service-account key file (required)", fileWhat: "key file",
		extraFlags: func(fs *flag.FlagSet) {
			project = fs.String("project", "sim-project", "the simulated Firebase project id")
		},
		open: func(f simFlags) (simServer, func() error, func(string) []byte, error) {
			s, err := fcmsim.New(fcmsim.Config{ProjectID: *project})
			if err != nil {
				return nil, nil, nil, err
			}
			return s, func() error { return s.SetFaults(fcmsim.Faults{Mode: *f.mode, Delay: *f.delay}) }, s.ServiceAccountJSON, nil
		}}.run(ctx, args, stdout, stderr)
}
