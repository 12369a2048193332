package replay_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/replay"
)

var replayMax = flag.Int("replay.max", 50_000, "largest scenario of BenchmarkReplay, in events (sizes double from 1,000 up to it)")

// replayScenario generates a scenario of n PoliceVetting events, one second apart, each for
// its own source whose expiry lies after the run: every event adds a Pending row (the
// expiry day) that stays Pending, so the work the pipeline looks at before
// each input and tick grows with the run. Every 100th event's expiry is 20 days out, so rows
// fall due during the run and ticks run too.
func replayScenario(n int) []byte {
	start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	type input struct {
		At    string         `json:"at"`
		Event map[string]any `json:"event"`
	}
	inputs := make([]input, n)
	for i := range n {
		at := start.Add(time.Duration(i+1) * time.Second)
		expires := "2030-06-30"
		if i%100 == 0 {
			expires = at.AddDate(0, 0, 20).Format(time.DateOnly)
		}
		inputs[i] = input{At: at.Format(time.RFC3339), Event: map[string]any{
			"specversion": "1.0", "id": fmt.Sprintf("evt-%d", i), "source": "/hr", "type": "PoliceVetting.Upserted",
			"businessunitid": "bu-syd", "entitytype": "PoliceVetting", "entityguid": fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			"revision": 1, "datacontenttype": "application/json",
			"data": map[string]any{"expiresOn": expires, "staffEmail": fmt.Sprintf("staff%d@example.test", i)},
		}}
	}
	raw, _ := json.Marshal(map[string]any{
		"start": start.Format(time.RFC3339), "until": start.AddDate(0, 2, 0).Format(time.RFC3339), "tick": "30s",
		"businessUnits": []map[string]any{{"id": "bu-syd", "name": "Sydney", "timeZone": "Australia/Sydney"}},
		"reminderSettings": []map[string]any{{"guid": "0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f", "businessUnitId": "bu-syd",
			"name": "Police check expiry", "sourceType": "PoliceVetting", "triggerType": "DateBased", "triggerKey": "expiresOn",
			"offsetsDays": []int{0}, "sendLocalTime": "09:00", "template": "police-vetting-expiry", "channels": []string{"log"},
			"recipients": map[string]any{"field": "staffEmail"}, "isActive": true, "maxLatenessHours": 48}},
		"inputs": inputs,
	})
	return raw
}

// BenchmarkReplay replays generated scenarios of 1,000, 2,000, 4,000, … events up to
// -replay.max (default 50,000) and reports the time per event: near-constant per event means
// replay grows linearly with the scenario. (Before SchedulerNextWakeUp became an index search
// each input and tick walked every Pending row: 8,000 events took 23 s, 50,000 did not finish
// in 180 s.) Run with -benchtime=1x (make bench).
func BenchmarkReplay(b *testing.B) {
	var sizes []int
	for n := 1000; n < *replayMax; n *= 2 {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, *replayMax)
	for _, n := range sizes {
		raw := replayScenario(n)
		sc, err := replay.Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				sum, err := replay.Run(context.Background(), sc, io.Discard, &replay.Options{Dir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				if sum.Rejected != 0 || sum.Deliveries == 0 {
					b.Fatalf("summary %+v: want no rejected input and some deliveries", sum)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/event")
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
			// CPU time (user + system) of the process per event: on a shared machine wall time
			// follows the neighbours' load, CPU time follows the work.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N*n), "cpu-µs/event")
		})
	}
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
