package reminder

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestSettingParsesBoundedInBytes attacks settingParses' bound: it counts
// entries (4,096), not bytes, and keeps each setting's stored body beside its parse. The
// largest setting the validation accepts (MaxRecipients fixed addresses of 320
// characters, every offset within ±MaxOffsetDays) is stored as its canonical JSON of about
// 70 KB; 512 distinct such settings put in the table must stay within a memory budget that
// fits the process's (issue 39: RSS ≤ 150 MB; here 64 MiB for this one cache). Kept by
// count alone, the 4,096 entries of such settings hold about 700 MiB.
func TestSettingParsesBoundedInBytes(t *testing.T) {
	t.Parallel()
	const budget = 64 << 20
	var fixed []string
	for i := range MaxRecipients {
		local := fmt.Sprintf("r%03d", i) + strings.Repeat("x", 320-len("@example.test")-4) // 320: the address rule's bound
		fixed = append(fixed, local+"@example.test")
	}
	var offsets []int
	for d := -MaxOffsetDays; d <= MaxOffsetDays; d++ {
		offsets = append(offsets, d)
	}
	fixedJSON, _ := json.Marshal(fixed)
	offsetsJSON, _ := json.Marshal(offsets)
	const guid = "00000000-0000-4000-8000-000000000003"
	raw := fmt.Sprintf(`{"guid":%q,"businessUnitId":"bu-1","name":"big","sourceType":"PoliceVetting","triggerType":"DateBased",
	  "triggerKey":"expiresOn","offsetsDays":%s,"sendLocalTime":"09:00","template":"t","channels":["log"],"recipients":{"fixed":%s}}`, guid, offsetsJSON, fixedJSON)
	if _, err := ParseSetting([]byte(raw)); err != nil {
		t.Skipf("the largest setting tried is refused (%v): the bound holds for it", err)
	}
	// Measured over 512 distinct settings (each its own stored body and parse, as distinct
	// settings read from the store are): about 90 MiB when every one is kept.
	const sample = 512
	var p settingParses
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	for i := range sample {
		g := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		body := strings.Replace(raw, guid, g, 1)
		set, err := ParseSetting([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := SettingRecord(set, 1, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		p.put(rec, set)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	total := int(ms.HeapAlloc) - int(before)
	runtime.KeepAlive(&p)
	t.Logf("%d of the largest valid settings put: %d kept, %d MiB held", sample, len(p.byGuid), total>>20)
	if total > budget {
		t.Errorf("settingParses holds %d MiB after %d of the largest valid settings, over %d MiB: bounded by count, not by bytes", total>>20, sample, budget>>20)
	}
}
