package sqlite_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/automation-platform/automation/sql/sqlite"
)

// Two processes that open one fresh database at once (two `serve` on one data directory, or
// serve and replay) both migrate it: goose reads the version before each migration's
// transaction, so the second applied a migration the first had just committed and failed
// ("table … already exists"), exiting at start-up. Both must open the database.
func TestConcurrentOpensOfAFreshDatabaseBothMigrate(t *testing.T) {
	t.Parallel()
	for round := range 4 {
		path := filepath.Join(t.TempDir(), "automation.db")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := sqlite.Open(context.Background(), path, nil)
				if err == nil {
					st.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, opener %d: %v", round, i, err)
			}
		}
	}
}
