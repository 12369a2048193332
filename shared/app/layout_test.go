package app_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestImportArrowsPointDown enforces STYLE.md's layering with `go list -deps`: domain
// packages import no project package above them, and nothing but the composition root and
// the binary knows the SQL dialects.
func TestImportArrowsPointDown(t *testing.T) {
	t.Parallel()
	const mod = "github.com/automation-platform/automation/"
	out, err := exec.Command("go", "list", "-json=ImportPath,Deps", "../../...").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	allowed := map[string][]string{ // package → project packages it may depend on
		"shared/automation": {},
		"shared/localtime":  {},
		"shared/store":      {"shared/automation"},
		"shared/bus":        {"shared/automation"},
		"shared/trace":      {},
		"shared/events":     {"shared/automation"},
		"shared/funchost":   {"shared/automation"},
		"shared/httpapi":    {"shared/automation", "shared/store"},
		"shared/config":     {},
		"shared/scheduler":  {"shared/automation", "shared/store", "shared/trace", "shared/logctx"},
		"shared/delivery":   {"shared/automation", "shared/store", "shared/bus", "shared/scheduler", "shared/trace", "shared/logctx"},
		// The real channels sit below the composition root and above the delivery core.
		"shared/delivery/channel": {"shared/automation", "shared/store", "shared/bus", "shared/scheduler", "shared/trace", "shared/delivery", "shared/logctx"},
		"shared/reminder":         {"shared/automation", "shared/store", "shared/trace", "shared/events", "shared/localtime", "shared/scheduler", "shared/delivery", "shared/bus", "shared/logctx"},
		"shared/report":           {"shared/automation", "shared/store", "shared/trace", "shared/localtime", "shared/scheduler", "shared/delivery", "shared/bus", "shared/logctx"},
		"shared/reportapi":        {"shared/automation", "shared/store", "shared/trace", "shared/localtime", "shared/scheduler", "shared/delivery", "shared/bus", "shared/httpapi", "shared/funchost", "shared/report", "shared/logctx"},
		"shared/logmask":          {},
		"shared/logctx":           {},
		// The support service reads what the pipeline wrote; the reminder package explains
		// date-based settings with the same functions that computed them.
		"shared/support": {"shared/automation", "shared/store", "shared/trace", "shared/logmask", "shared/reminder", "shared/localtime",
			"shared/events", "shared/scheduler", "shared/delivery", "shared/bus", "shared/logctx"},
		// Thin HTTP handlers: the service, httpapi and the router only.
		"shared/supportapi": {"shared/support", "shared/httpapi", "shared/funchost", "shared/automation", "shared/store", "shared/trace",
			"shared/logmask", "shared/reminder", "shared/localtime", "shared/events", "shared/scheduler", "shared/delivery", "shared/bus", "shared/logctx"},
		"shared/settingsapi": {"shared/automation", "shared/store", "shared/trace", "shared/events", "shared/localtime", "shared/scheduler", "shared/delivery", "shared/bus",
			"shared/httpapi", "shared/reminder", "shared/logctx"},
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(p.ImportPath, mod)
		may, checked := allowed[rel]
		for _, d := range p.Deps {
			if !strings.HasPrefix(d, mod) {
				if strings.Contains(d, "azure-sdk-for-go") && !azureAllowed(rel) {
					t.Errorf("%s imports the Azure SDK (%s); only shared/azure (and the SQL Server driver's Entra ID auth in sql/mssql) may", rel, d)
				}
				continue
			}
			dep := strings.TrimPrefix(d, mod)
			if strings.HasPrefix(dep, "sql/") && strings.HasPrefix(rel, "shared/") && rel != "shared/app" && rel != "shared/replay" {
				t.Errorf("%s depends on SQL dialect %s; only shared/app (and runtimes built on it) may", rel, dep)
			}
			if checked && !contains(may, dep) {
				t.Errorf("%s depends on %s; allowed: %v", rel, dep, may)
			}
		}
		if checked {
			seen++
		}
	}
	if seen != len(allowed) {
		t.Fatalf("checked %d of %d packages", seen, len(allowed))
	}
}

// azureAllowed: the adapters, and whatever is built on the composition root.
func azureAllowed(rel string) bool {
	switch rel {
	case "shared/azure", "sql/mssql", "shared/app", "shared/replay", "functions":
		return true
	}
	return strings.HasPrefix(rel, "shared/handler")
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
