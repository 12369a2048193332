package reminder

import (
	"context"
	"fmt"
	"testing"

	"github.com/automation-platform/automation/shared/store"
)

// settingStore serves one setting record and counts its reads.
type settingStore struct {
	Store
	rec   store.ReminderSettingRecord
	reads int
}

func (s *settingStore) ReminderSettingGet(_ context.Context, guid string) (store.ReminderSettingRecord, error) {
	s.reads++
	if guid != s.rec.Guid {
		return store.ReminderSettingRecord{}, store.ErrNotFound
	}
	return s.rec, nil
}

func settingBody(guid, name string) string {
	return fmt.Sprintf(`{"guid":%q,"businessUnitId":"bu-1","name":%q,"sourceType":"PoliceVetting","triggerType":"DateBased",
	  "triggerKey":"expiresOn","offsetsDays":[0],"sendLocalTime":"09:00","template":"t","channels":["log"],"recipients":{"field":"email"}}`, guid, name)
}

// TestSettingParsedOnceAcrossBatches: behind the 09:00 herd every batch names the same
// settings; each batch still reads its settings from the store (a batch never uses a setting
// older than its claim), but a body read again unchanged is not parsed again, and a changed
// body is parsed and used at once.
func TestSettingParsedOnceAcrossBatches(t *testing.T) {
	t.Parallel()
	const guid = "00000000-0000-4000-8000-000000000001"
	st := &settingStore{rec: store.ReminderSettingRecord{Guid: guid, Version: 1, Body: settingBody(guid, "first")}}
	h := &Handler{Store: st}
	ctx := context.Background()
	for batch := 0; batch < 3; batch++ {
		bctx := h.BatchScope(ctx, nil) // one batch's scope: its own reads
		e, err := h.loadSetting(bctx, guid)
		if err != nil || e.set.Name != "first" {
			t.Fatalf("batch %d: %q, %v", batch, e.set.Name, err)
		}
	}
	if st.reads != 3 || h.parsed.parses != 1 {
		t.Errorf("3 batches: %d reads, %d parses; want 3 reads (one a batch) and 1 parse", st.reads, h.parsed.parses)
	}
	st.rec.Version, st.rec.Body = 2, settingBody(guid, "second")
	e, err := h.loadSetting(h.BatchScope(ctx, nil), guid)
	if err != nil || e.set.Name != "second" || e.rec.Version != 2 {
		t.Fatalf("after the change: %q (Version %d), %v; want the new body's setting", e.set.Name, e.rec.Version, err)
	}
	if h.parsed.parses != 2 {
		t.Errorf("after the change: %d parses; want 2", h.parsed.parses)
	}
	// Bounded: a full table is emptied, not grown.
	for i := 0; i < maxSettingParses+10; i++ {
		h.parsed.put(store.ReminderSettingRecord{Guid: fmt.Sprint(i), Body: "{}"}, Setting{})
	}
	if n := len(h.parsed.byGuid); n > maxSettingParses {
		t.Errorf("%d parses kept; want at most %d", n, maxSettingParses)
	}
}
