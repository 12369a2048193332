package sqlite_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/automation-platform/automation/sql/sqlstore"
)

// TestGeneratedQueriesAreCurrent: every query file generated from a template
// (queries/*.sql.tmpl) holds exactly what sqlstore.GenerateQueries makes of it now; after
// editing a template, run go generate ./sql/... and commit both.
func TestGeneratedQueriesAreCurrent(t *testing.T) {
	t.Parallel()
	tmpls, err := filepath.Glob("queries/*.sql.tmpl")
	if err != nil || len(tmpls) == 0 {
		t.Fatalf("no query templates found: %v", err)
	}
	for _, tmpl := range tmpls {
		raw, err := os.ReadFile(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sqlstore.GenerateQueries(tmpl, raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(tmpl[:len(tmpl)-len(".tmpl")])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./sql/... and commit it", tmpl[:len(tmpl)-len(".tmpl")])
		}
	}
}
