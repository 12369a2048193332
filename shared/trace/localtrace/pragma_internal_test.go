package localtrace

import "testing"

// TestOpenCheckpointsEvery10000Pages pins the trace database's automatic checkpoint at
// 10,000 pages: every pooled connection gets it from the DSN.
func TestOpenCheckpointsEvery10000Pages(t *testing.T) {
	t.Parallel()
	s := openIn(t, t.TempDir())
	var pages int
	if err := s.db.QueryRow("PRAGMA wal_autocheckpoint").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if pages != 10_000 {
		t.Fatalf("wal_autocheckpoint %d, want 10000", pages)
	}
}
