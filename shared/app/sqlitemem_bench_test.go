package app_test

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	storesqlite "github.com/automation-platform/automation/sql/sqlite"
)

// sqliteConns are the SQLite connections the process opened since sqliteMemWatch, for W6's
// memory series (W6_QUEUES): what each holds outside the Go heap, by sqlite3_db_status.
var sqliteConns struct {
	once sync.Once
	mu   sync.Mutex
	on   bool
	list []sqliteConn
}

type sqliteConn struct {
	db    uintptr // the connection's sqlite3*
	trace bool    // the local trace's database, not the store's
}

// sqliteMemWatch starts recording the connections opened from now on (a connection hook;
// the connections are never closed while W6 runs: the pools keep them idle).
func sqliteMemWatch() {
	sqliteConns.once.Do(func() {
		sqlite.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, dsn string) error {
			v := reflect.ValueOf(c)
			if v.Kind() == reflect.Pointer {
				v = v.Elem()
			}
			f := v.FieldByName("db")
			if !f.IsValid() {
				return nil
			}
			sqliteConns.mu.Lock()
			if sqliteConns.on {
				sqliteConns.list = append(sqliteConns.list, sqliteConn{db: uintptr(f.Uint()), trace: strings.Contains(dsn, "trace.db")})
			}
			sqliteConns.mu.Unlock()
			return nil
		})
	})
	sqliteConns.mu.Lock()
	sqliteConns.on, sqliteConns.list = true, nil
	sqliteConns.mu.Unlock()
}

// sqliteMemStop forgets the connections (before the store closes them).
func sqliteMemStop() {
	sqliteConns.mu.Lock()
	sqliteConns.on, sqliteConns.list = false, nil
	sqliteConns.mu.Unlock()
}

// sqliteMemLine sums sqlite3_db_status over the recorded connections: the page caches
// (SQLite's own count: pages × (page size + header), not the allocator's rounding), the
// schemas, the prepared statements and lookaside, in KiB, for the store's and the trace's.
func sqliteMemLine() string {
	sqliteConns.mu.Lock()
	list := append([]sqliteConn(nil), sqliteConns.list...)
	sqliteConns.mu.Unlock()
	tls := libc.NewTLS()
	defer tls.Close()
	p := tls.Alloc(8)
	defer tls.Free(8)
	get := func(db uintptr, op int32) int {
		if sqlite3.Xsqlite3_db_status(tls, db, op, p, p+4, 0) != sqlite3.SQLITE_OK {
			return 0
		}
		return int(**(**int32)(unsafe.Pointer(&p))) // p is C memory: no Go pointer held
	}
	var b strings.Builder
	for _, trace := range []bool{false, true} {
		var n, cache, schema, stmt, look int
		var caches []int
		for _, c := range list {
			if c.trace != trace {
				continue
			}
			n++
			cu := get(c.db, sqlite3.SQLITE_DBSTATUS_CACHE_USED)
			caches = append(caches, cu>>10)
			cache += cu
			schema += get(c.db, sqlite3.SQLITE_DBSTATUS_SCHEMA_USED)
			stmt += get(c.db, sqlite3.SQLITE_DBSTATUS_STMT_USED)
			look += get(c.db, sqlite3.SQLITE_DBSTATUS_LOOKASIDE_USED)
		}
		name := "store"
		if trace {
			name = "trace"
		}
		fmt.Fprintf(&b, "%s %d conns: cache %d KiB %v, schema %d KiB, stmts %d KiB, lookaside %d KiB; ", name, n, cache>>10, caches, schema>>10, stmt>>10, look>>10)
	}
	if slab := storesqlite.PageSlab(); slab.Err == nil { // the process's page slab (sql/sqlite.PageSlab)
		fmt.Fprintf(&b, "slab %d of %d slots of %d B (high %d), %d KiB of pages outside it; ", slab.Used, slab.Slots, slab.SlotBytes, slab.UsedHigh, slab.OverflowBytes>>10)
	} else {
		fmt.Fprintf(&b, "slab: %v; ", slab.Err)
	}
	return b.String()
}
