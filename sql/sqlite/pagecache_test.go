package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	msqlite "modernc.org/sqlite"

	"github.com/automation-platform/automation/sql/sqlite"
)

// TestPageCachesStayUnderTheBound: after every pooled connection of a store has read a
// table larger than all the caches together, the pages the pool's connections hold sum to
// at most PageCacheBoundKiB of the defaults, 10.25 MiB (docs/performance.md, "What holds
// W6's memory"). With the former 4 MiB per connection the eight held 32 MiB, and the
// writer, which takes the readers' pages, grew to 44 MiB in W6: twice that in memory.
func TestPageCachesStayUnderTheBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const budgetKiB = 8<<10 + 9*256 // the writer's 8 MiB and nine shares of 256 KiB
	if got, want := sqlite.PageCacheBoundKiB(nil), budgetKiB; got != want {
		t.Fatalf("PageCacheBoundKiB(nil) = %d KiB, want %d", got, want)
	}
	if got, want := sqlite.PageCacheBoundKiB(&sqlite.Options{MaxOpenConns: 3, CacheKiB: 1024, WriterCacheKiB: 2048}), 4*1024+2048; got != want {
		t.Fatalf("PageCacheBoundKiB(3 × 1 MiB, writer 2 MiB) = %d KiB, want %d", got, want)
	}
	conns := readBigOnEveryConn(t, ctx)
	total := 0
	for i, c := range conns {
		if err := c.Raw(func(dc any) error {
			used, _, err := dc.(msqlite.DBStatus).Status(msqlite.DBStatusCacheUsed, false)
			total += used
			t.Logf("connection %d: %d KiB cached", i, used>>10)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if total > budgetKiB<<10 {
		t.Errorf("the pool's connections hold %d KiB of pages, more than the bound of %d KiB", total>>10, budgetKiB)
	}
}

// TestPageCachesComeFromTheSlab: the pages a store's connections cache come from the
// process's slab (SQLITE_CONFIG_PAGECACHE: slots of exactly a page and its headers), not from
// malloc, which modernc's allocator serves in 8 KiB slots, about 9.4 KB of memory per 4 KiB
// page (docs/performance.md, "The page cache in one slab"). After the writer and every pooled
// connection have read a table larger than all their caches together, the page cache holds at
// most 1 MiB outside the slab (the pinned pages of the moment, other tests' included). Without
// the slab the same reads leave every cached page outside it (2.4 MiB when run alone).
func TestPageCachesComeFromTheSlab(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	slab := sqlite.PageSlab()
	if slab.Err != nil {
		t.Fatalf("PageSlab: %v", slab.Err)
	}
	if slab.Slots != sqlite.PageSlabSlots || slab.SlotBytes < sqlite.PageSlabPageBytes || slab.SlotBytes > sqlite.PageSlabPageBytes+1024 {
		t.Fatalf("PageSlab = %d slots of %d bytes, want %d slots of a 4 KiB page and its headers", slab.Slots, slab.SlotBytes, sqlite.PageSlabSlots)
	}
	readBigOnEveryConn(t, ctx)
	got := sqlite.PageSlab()
	t.Logf("slab: %d of %d slots used (high %d), %d KiB of pages outside it", got.Used, got.Slots, got.UsedHigh, got.OverflowBytes>>10)
	if got.Used == 0 {
		t.Errorf("no page of the slab is used after reading 24 MiB")
	}
	if got.OverflowBytes > 1<<20 {
		t.Errorf("the page cache holds %d KiB outside the slab, want at most 1 MiB", got.OverflowBytes>>10)
	}
}

// readBigOnEveryConn opens a store in a temporary directory, writes a table of 24 MiB of
// pages (6,000 rows of 4,000 random bytes: more than every page cache together, and than the
// slab), and has every pooled connection at once (the writer's and the checkpointer's are
// pinned outside the pool) read all of it. It returns the eight connections, held open (with
// the store) until the test ends.
func readBigOnEveryConn(t *testing.T, ctx context.Context) []*sql.Conn {
	t.Helper()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "big.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.DB().ExecContext(ctx, `CREATE TABLE big (x BLOB);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000)
		INSERT INTO big SELECT randomblob(4000) FROM n`); err != nil {
		t.Fatal(err)
	}
	var conns []*sql.Conn
	for range 8 {
		c, err := st.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() }) // before the store's close: cleanups run last first
		conns = append(conns, c)
		var n int64
		if err := c.QueryRowContext(ctx, `SELECT SUM(LENGTH(x)) FROM big`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 6000*4000 {
			t.Fatalf("read %d bytes, want %d", n, 6000*4000)
		}
	}
	return conns
}
