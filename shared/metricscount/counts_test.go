package metricscount_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/metricscount"
	"github.com/automation-platform/automation/shared/store"
)

// Counts drains what was added once, stamped with the minute; restored counts come back
// with the next drain; the map is bounded; a nil Counts counts nothing.
func TestCountsDrainRestoreBound(t *testing.T) {
	t.Parallel()
	c := metricscount.New(metricscount.FlowTrigger)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				c.Add("bu-1", "GoldReached", metricscount.OutcomeFired, 1)
			}
		}()
	}
	wg.Wait()
	c.Add("bu-2", "GoldReached", metricscount.OutcomeFired, 0) // nothing
	at := time.Date(2026, 10, 5, 9, 30, 42, 0, time.FixedZone("x", 3600))
	got := c.DrainCounts(at)
	if len(got) != 1 || got[0].N != 800 || got[0].Flow != "trigger" || got[0].BusinessUnitID != "bu-1" || got[0].Label != "GoldReached" ||
		!got[0].MinuteOn.Equal(time.Date(2026, 10, 5, 8, 30, 0, 0, time.UTC)) || got[0].MinuteOn.Location() != time.UTC {
		t.Fatalf("drained: %+v", got)
	}
	if again := c.DrainCounts(at); len(again) != 0 {
		t.Fatalf("drained twice: %+v", again)
	}
	c.Add("bu-1", "GoldReached", metricscount.OutcomeFired, 2)
	c.RestoreCounts(append(got, got[0], store.MetricsCount{Flow: store.FlowIngest, Outcome: "accepted", N: 5})) // another flow's row is not ours
	if got := c.DrainCounts(at); len(got) != 1 || got[0].N != 2+800+800 {
		t.Fatalf("after a restore: %+v", got)
	}
	for i := range metricscount.MaxKeys + 50 {
		c.Add(fmt.Sprintf("bu-%d", i), "x", metricscount.OutcomeFired, 1)
	}
	if n := c.Len(); n > metricscount.MaxKeys+1 {
		t.Fatalf("%d keys, bound %d", n, metricscount.MaxKeys)
	}
	var nilCounts *metricscount.Counts
	nilCounts.Add("bu-1", "x", "fired", 1)
	if nilCounts.DrainCounts(at) != nil || nilCounts.Len() != 0 {
		t.Fatal("a nil Counts counted")
	}
}

// A unit or label wider than its MetricsCount column, in UTF-16 code units as SQL Server's
// nvarchar counts them, counts under "": never a row the store refuses at every flush.
func TestCountsKeyFitsTheColumns(t *testing.T) {
	t.Parallel()
	c := metricscount.New(metricscount.FlowTrigger)
	fits := strings.Repeat("é", store.MaxMetricsCountLabel)     // 200 code units, 400 bytes
	wide := strings.Repeat("😀", store.MaxMetricsCountLabel/2+1) // 202 code units (surrogate pairs)
	c.Add("bu-1", fits, metricscount.OutcomeFired, 1)
	c.Add("bu-1", wide, metricscount.OutcomeFired, 2)
	c.Add(strings.Repeat("u", store.MaxMetricsCountUnit+1), "x", metricscount.OutcomeFired, 4)
	c.RestoreCounts([]store.MetricsCount{{Flow: metricscount.FlowTrigger, BusinessUnitID: "bu-1", Label: wide, Outcome: metricscount.OutcomeFired, N: 8}})
	got := map[[2]string]int64{}
	for _, m := range c.DrainCounts(time.Now()) {
		got[[2]string{m.BusinessUnitID, m.Label}] = m.N
	}
	want := map[[2]string]int64{{"bu-1", fits}: 1, {"bu-1", ""}: 10, {"", "x"}: 4}
	if len(got) != len(want) {
		t.Fatalf("drained %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("drained %v, want %v", got, want)
		}
	}
}
