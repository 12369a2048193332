package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/config"
)

func TestReconciliationSettings(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := config.Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.ReconciliationSchedule != "0 */15 * * * *" || c.ReconcileBatchSize != 100 || c.ReconcileMaxBatches != 50 ||
		c.ReconcileDueDays != 14 || c.ReconcileBusinessUnits != "*" || len(c.SourceURLs) != 0 || c.IdempotencyRetention != 168*time.Hour {
		t.Fatalf("defaults: %+v", c)
	}
	if v, ok := c.Lookup("ReconciliationSchedule"); !ok || v != c.ReconciliationSchedule {
		t.Fatal("Lookup(ReconciliationSchedule)")
	}
	c, err = config.Load(env(map[string]string{"AUTOMATION_SOURCE_URLS": "PoliceVetting=https://hr.example.test/api/checks, ClassSession=http://127.0.0.1:9000/classes"}))
	if err != nil || len(c.SourceURLs) != 2 || c.SourceURLs["ClassSession"] != "http://127.0.0.1:9000/classes" {
		t.Fatalf("%+v %v", c.SourceURLs, err)
	}
	for _, bad := range []string{"PoliceVetting", "A=http://hr.example.test/x", "A=https://x.test,A=https://y.test", "=https://x.test"} {
		if _, err := config.Load(env(map[string]string{"AUTOMATION_SOURCE_URLS": bad})); err == nil || !strings.Contains(err.Error(), "AUTOMATION_SOURCE_URLS") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := config.Load(env(map[string]string{"AUTOMATION_RECONCILE_BATCH_SIZE": "5000"})); err == nil {
		t.Error("batch size over 1000 must fail")
	}
}
