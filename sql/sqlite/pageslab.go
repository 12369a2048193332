package sqlite

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	msqlite "modernc.org/sqlite/lib"
)

// The process's page cache memory: one slab of fixed-size slots (docs/performance.md, "The
// page cache in one slab").
//
// Without it every cached page is its own malloc of the page size plus SQLite's headers
// (4,096 + about 300 bytes), which modernc's allocator (modernc.org/memory) serves from an
// 8 KiB slot: about 9.4 KB of memory per 4 KiB page, half of it padding. With
// SQLITE_CONFIG_PAGECACHE, pcache1 takes its pages from one buffer of PageSlabSlots slots of
// exactly a page and its headers (about 4.4 KB each), so the same pages take less than half
// the memory. The slab is also a bound of the process as a whole: once fewer than ten of its
// slots are free, pcache1 is "under memory pressure" and a cache that needs a page recycles
// the least recently used unpinned page of the one cache (all connections share it:
// SQLITE_ENABLE_MEMORY_MANAGEMENT, see DefaultCacheKiB) instead of allocating another; only
// pinned pages past the slab come from malloc.
//
// SQLite takes this setting only before it initialises, which its first open does, so it is
// made once per process when this package is initialised (before any connection exists in a
// program that imports it). The buffer is only reserved then (modernc's allocator maps it,
// untouched); SQLite writes every slot once when it initialises, at the first open (it
// threads its free list through them), so from then on the slab is resident as a whole:
// PageSlabSlots × PageSlabInfo.SlotBytes, 12.6 MB with 4,368-byte slots. A process that
// never opens a SQLite database (the custom handler on SQL Server) does not pay for it.
const (
	// PageSlabPageBytes is the database page size the slots are made for: SQLite's default,
	// which every database of this repository uses. A database with larger pages takes
	// them from malloc as before.
	PageSlabPageBytes = 4096
	// PageSlabSlots is how many pages the slab holds: the embedded store's page caches at
	// their defaults (PageCacheBoundKiB(nil): the writer's 8 MiB and nine shares of 256 KiB)
	// and the local trace's four connections of 256 KiB (shared/trace/localtrace), in
	// 4 KiB pages: 2,880 pages, 12.6 MB of memory with their headers. SQLite's own
	// count of a cache's size includes the headers, so the caches' sum fits with room.
	PageSlabSlots = (DefaultWriterCacheKiB + 9*DefaultCacheKiB + 4*256) / (PageSlabPageBytes >> 10)
)

// PageSlabInfo is what the process's page slab is and holds (PageSlab).
type PageSlabInfo struct {
	Slots     int // slots in the slab (0: not installed, see Err)
	SlotBytes int // bytes per slot: the page size and SQLite's headers, rounded up to 8
	// Used is how many slots hold a page now, and UsedHigh the most that ever did.
	Used, UsedHigh int
	// OverflowBytes are the page cache's bytes outside the slab now (from malloc: pages past
	// the slab, or of another size).
	OverflowBytes int
	// Err is why the slab is not installed (SQLite was initialised before this package,
	// or refused the setting); nil when it is.
	Err error
}

var pageSlab struct {
	once      sync.Once
	slotBytes int
	err       error
}

func init() { installPageSlab() }

// installPageSlab gives SQLite the slab (SQLITE_CONFIG_PAGECACHE), once per process. It must
// run before the first connection opens; afterwards SQLite answers SQLITE_MISUSE and the
// page caches stay on malloc (PageSlab reports it in Err).
func installPageSlab() {
	pageSlab.once.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		args := libc.Xmalloc(tls, 3*8) // the variadic arguments, 8 bytes each
		out := libc.Xmalloc(tls, 8)
		if args == 0 || out == 0 {
			pageSlab.err = errors.New("sqlite page slab: out of memory for the arguments")
			return
		}
		defer libc.Xfree(tls, args)
		defer libc.Xfree(tls, out)
		**(**int32)(unsafe.Pointer(&out)) = 0 // out is C memory: no Go pointer held
		// The headers a slot needs besides the page (allowed at any time).
		if rc := msqlite.Xsqlite3_config(tls, msqlite.SQLITE_CONFIG_PCACHE_HDRSZ, libc.VaList(args, out)); rc != msqlite.SQLITE_OK {
			pageSlab.err = fmt.Errorf("sqlite page slab: SQLITE_CONFIG_PCACHE_HDRSZ answered %d", rc)
			return
		}
		hdr := int(**(**int32)(unsafe.Pointer(&out)))
		slot := (PageSlabPageBytes + hdr + 7) &^ 7
		buf := libc.Xmalloc(tls, types.Size_t(slot*PageSlabSlots)) // the process's: never freed
		if buf == 0 {
			pageSlab.err = fmt.Errorf("sqlite page slab: out of memory for %d slots of %d bytes", PageSlabSlots, slot)
			return
		}
		if rc := msqlite.Xsqlite3_config(tls, msqlite.SQLITE_CONFIG_PAGECACHE, libc.VaList(args, buf, int32(slot), int32(PageSlabSlots))); rc != msqlite.SQLITE_OK {
			libc.Xfree(tls, buf)
			pageSlab.err = fmt.Errorf("sqlite page slab: SQLITE_CONFIG_PAGECACHE answered %d (SQLite already initialised: a connection opened before this package's init)", rc)
			return
		}
		pageSlab.slotBytes = slot
	})
}

// PageSlab reports the process's page slab and what it holds now (sqlite3_status of
// SQLITE_STATUS_PAGECACHE_USED and _OVERFLOW).
func PageSlab() PageSlabInfo {
	installPageSlab()
	if pageSlab.err != nil {
		return PageSlabInfo{Err: pageSlab.err}
	}
	info := PageSlabInfo{Slots: PageSlabSlots, SlotBytes: pageSlab.slotBytes}
	tls := libc.NewTLS()
	defer tls.Close()
	p := libc.Xmalloc(tls, 16)
	if p == 0 {
		info.Err = errors.New("sqlite page slab: out of memory for the status")
		return info
	}
	defer libc.Xfree(tls, p)
	status := func(op int32) (cur, high int) {
		**(**[2]int64)(unsafe.Pointer(&p)) = [2]int64{} // p is C memory: no Go pointer held
		msqlite.Xsqlite3_status64(tls, op, p, p+8, 0)
		v := **(**[2]int64)(unsafe.Pointer(&p))
		return int(v[0]), int(v[1])
	}
	info.Used, info.UsedHigh = status(msqlite.SQLITE_STATUS_PAGECACHE_USED)
	info.OverflowBytes, _ = status(msqlite.SQLITE_STATUS_PAGECACHE_OVERFLOW)
	return info
}
