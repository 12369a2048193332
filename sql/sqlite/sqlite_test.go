package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestMigrateTwiceIsNoop(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	for i := 0; i < 2; i++ {
		s, err := sqlite.Open(context.Background(), path, nil)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		s.Close()
	}
}

// TestOpenSizesPageCacheAndCheckpoint pins the connection settings of the page cache and
// the WAL checkpoint (docs/performance.md): the defaults, and Options overriding them, on
// every connection of the pool (each is opened with the same pragmas).
func TestOpenSizesPageCacheAndCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		opts             *sqlite.Options
		cache, autoCkpts int
	}{
		{nil, -sqlite.DefaultCacheKiB, sqlite.DefaultAutoCheckpointPages},
		{&sqlite.Options{CacheKiB: 1024, AutoCheckpointPages: 500}, -1024, 500},
	} {
		s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"), tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		// Hold two connections at once so that both a reused and a new one are checked.
		var conns []*sql.Conn
		for range 2 {
			c, err := s.DB().Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		for i, c := range conns {
			var cache, ckpt int
			if err := c.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&cache); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&ckpt); err != nil {
				t.Fatal(err)
			}
			if cache != tc.cache || ckpt != tc.autoCkpts {
				t.Errorf("options %+v, connection %d: cache_size %d wal_autocheckpoint %d, want %d and %d", tc.opts, i, cache, ckpt, tc.cache, tc.autoCkpts)
			}
			c.Close()
		}
		s.Close()
	}
}
