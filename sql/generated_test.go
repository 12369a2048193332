package sql_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/automation-platform/automation/sql/sqlstore"
)

// TestGeneratedQueriesAreCurrent: in every dialect, each query file generated from a
// template ({dialect}/queries/*.sql.tmpl) holds exactly what sqlstore.GenerateQueries makes
// of it now; after editing a template, run go generate ./sql/... and commit both.
func TestGeneratedQueriesAreCurrent(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		tmpls, err := filepath.Glob(filepath.Join(d.name, "queries", "*.sql.tmpl"))
		if err != nil || len(tmpls) == 0 {
			t.Fatalf("%s: no query templates found: %v", d.name, err)
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
			generated := tmpl[:len(tmpl)-len(".tmpl")]
			got, err := os.ReadFile(generated)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale: run go generate ./sql/... and commit it", generated)
			}
		}
	}
}
