package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/automation-platform/automation/shared/azurestack"
)

// emulatorConfigCmd writes the Service Bus emulator's Config.json generated from the topology
// table (shared/azurestack) to stdout, or to -o file (docker-compose.azure.yml mounts
// scripts/azure-stack/servicebus-config.json).
func emulatorConfigCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("emulator-config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write to `file` instead of stdout (e.g. "+azurestack.ConfigPath+")")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "usage: automation emulator-config [-o file]\n")
		return 2
	}
	b, err := azurestack.MarshalEmulator()
	if err != nil {
		fmt.Fprintf(stderr, "automation emulator-config: %v\n", err)
		return 1
	}
	if *out == "" {
		_, err = stdout.Write(b)
	} else {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "automation emulator-config: %v\n", err)
		return 1
	}
	return 0
}
