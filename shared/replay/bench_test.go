package replay_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/replay"
)

// BenchmarkReplayScenarios replays each scenario of testdata/scenarios (database, trace and every
// simulated tick included), one sub-benchmark per file: the cost of `make run` without the
// compile.
func BenchmarkReplayScenarios(b *testing.B) {
	files, _ := filepath.Glob("../../testdata/scenarios/*.json")
	if len(files) == 0 {
		b.Fatal("no scenarios found")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(b *testing.B) {
			inputs := 0
			for b.Loop() {
				sc, err := replay.Parse(raw)
				if err != nil {
					b.Fatal(err)
				}
				inputs = len(sc.Inputs)
				if _, err := replay.Run(context.Background(), sc, io.Discard, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/run")
			b.ReportMetric(float64(b.N*inputs)/b.Elapsed().Seconds(), "inputs/s")
		})
	}
}
