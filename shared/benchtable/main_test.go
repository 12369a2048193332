package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestParseBenchReadsReportedMetrics: rows/s is the rate when several rates are reported,
// the others become stage rates, and p50/p99/peak RSS are picked up by unit; ns/op is not.
func TestParseBenchReadsReportedMetrics(t *testing.T) {
	out := []byte("goos: linux\nBenchmarkEndToEnd-2   \t       1\t5107023604 ns/op\t      1986 burndown-rows/s\t       834.3 dispatch-deliveries/s\t        59.21 peak-rss-MiB\t       406.5 rows/s\t 12 p50-ms\t 40 p99-ms/batch\nPASS\n")
	rs := ParseBench("W4", out)
	if len(rs) != 1 {
		t.Fatalf("rows %+v", rs)
	}
	r := rs[0]
	if r.Name != "W4" || r.Rate != 406.5 || r.RateUnit != "rows/s" || r.RSSMiB != 59.21 || r.P50 != "12 ms" || r.P99 != "40 ms/batch" {
		t.Errorf("row %+v", r)
	}
	if strings.Join(r.Stages, "; ") != "burndown-rows 1,986/s; dispatch-deliveries 834/s" {
		t.Errorf("stages %q", r.Stages)
	}
}

// TestParseBenchNamesSubBenchmarks: several result lines become rows named by sub-benchmark.
func TestParseBenchNamesSubBenchmarks(t *testing.T) {
	out := []byte("BenchmarkReplay/events=1000-2 1 5 ns/op 100 events/s\nBenchmarkReplay/events=2000-2 1 5 ns/op 90 events/s\n")
	rs := ParseBench("replay", out)
	if len(rs) != 2 || rs[0].Name != "replay events=1000" || rs[1].Rate != 90 || rs[1].RateUnit != "events/s" {
		t.Errorf("rows %+v", rs)
	}
}

// TestFormatLatency: milliseconds stay milliseconds below 10 s, seconds from there.
func TestFormatLatency(t *testing.T) {
	if got := formatLatency(190, "ms/batch"); got != "190 ms/batch" {
		t.Error(got)
	}
	if got := formatLatency(121868, "ms"); got != "121.9 s" {
		t.Error(got)
	}
}

// TestParseWorkloads expands ${VAR}, reads the peer rows and rejects a malformed line.
func TestParseWorkloads(t *testing.T) {
	env := func(k string) string { return map[string]string{"N": "1000"}[k] }
	ws, err := ParseWorkloads(strings.NewReader("# comment\n\nW1 | ./a | ^B$ | -rows=${N} -x | ${N}\nW3 | ./b | ^C$\n"), env)
	if err != nil || len(ws) != 2 || ws[0].PeerRows != 1000 || strings.Join(ws[0].Args, " ") != "-rows=1000 -x" || ws[1].PeerRows != 0 {
		t.Fatalf("%+v %v", ws, err)
	}
	if _, err := ParseWorkloads(strings.NewReader("only | two\n"), env); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("malformed line: %v", err)
	}
	if _, err := ParseWorkloads(strings.NewReader("a | b | c | | many\n"), env); err == nil {
		t.Error("bad peer rows accepted")
	}
}

// TestPrintWithoutPeers has no ratio columns; with peers a ratio is rate / peer rate.
func TestPrintWithoutPeers(t *testing.T) {
	var b bytes.Buffer
	rows := []Result{{Name: "W1", Rate: 12000, RateUnit: "rows/s", RSSMiB: 80, Floor: 20000, River: 2000}}
	if err := Print(&b, rows, false); err != nil || strings.Contains(b.String(), "vs floor") || !strings.Contains(b.String(), "12,000 rows/s") {
		t.Errorf("%q %v", b.String(), err)
	}
	b.Reset()
	if err := Print(&b, rows, true); err != nil || !strings.Contains(b.String(), "0.60x") || !strings.Contains(b.String(), "6.00x") {
		t.Errorf("%q %v", b.String(), err)
	}
}
