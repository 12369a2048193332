package localtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// embeddedZipSHA256 pins zoneinfo.zip to TZDataVersion: replacing the zip
// without bumping TZDataVersion (which triggers recompute of pending rows)
// fails this test. Update both together, see doc.go.
var embeddedZipSHA256 = map[string]string{
	// Go 1.26.8 $GOROOT/lib/time/zoneinfo.zip.
	"2025c": "8f55634d05f8bca1f7bc7c69c5933428c69357e0bdf565e5ba224e3f88ff12e8",
}

func TestEmbeddedZipMatchesVersion(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256(zoneinfoZip)
	got := hex.EncodeToString(sum[:])
	want, ok := embeddedZipSHA256[TZDataVersion]
	if !ok {
		t.Fatalf("no checksum recorded for TZDataVersion %q (zip sha256 %s)", TZDataVersion, got)
	}
	if got != want {
		t.Fatalf("embedded zoneinfo.zip sha256 = %s, want %s for tzdata %s: bump TZDataVersion with the zip",
			got, want, TZDataVersion)
	}
}

func TestLoadZoneKnown(t *testing.T) {
	t.Parallel()
	// Offsets at a fixed instant, 2026-07-01T00:00Z (southern winter,
	// northern summer).
	at := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		id      string
		wantOff time.Duration
	}{
		{"Australia/Sydney", 10 * time.Hour},
		{"Australia/Lord_Howe", 10*time.Hour + 30*time.Minute},
		{"America/New_York", -4 * time.Hour},
		{"Asia/Kathmandu", 5*time.Hour + 45*time.Minute},
		{"Asia/Ho_Chi_Minh", 7 * time.Hour},
		{"Europe/London", 1 * time.Hour},
		{"America/Havana", -4 * time.Hour},
		{"America/Santiago", -4 * time.Hour},
		{"Asia/Beirut", 3 * time.Hour},
		{"Pacific/Apia", 13 * time.Hour},
		{"Etc/UTC", 0},
		{"UTC", 0},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			t.Parallel()
			loc, err := LoadZone(tc.id)
			if err != nil {
				t.Fatalf("LoadZone(%q): %v", tc.id, err)
			}
			if loc.String() != tc.id {
				t.Errorf("loc.String() = %q, want %q", loc.String(), tc.id)
			}
			_, off := at.In(loc).Zone()
			if got := time.Duration(off) * time.Second; got != tc.wantOff {
				t.Errorf("offset at %s = %v, want %v", at.Format(time.RFC3339), got, tc.wantOff)
			}
			again, err := LoadZone(tc.id)
			if err != nil || again != loc {
				t.Errorf("second LoadZone(%q) = %p, %v; want cached %p", tc.id, again, err, loc)
			}
		})
	}
	if loc, _ := LoadZone("UTC"); loc != time.UTC {
		t.Errorf("LoadZone(\"UTC\") = %p, want time.UTC", loc)
	}
}

func TestLoadZoneErrors(t *testing.T) {
	t.Parallel()
	tests := []string{
		"",
		"Local",
		"Mars/Olympus_Mons",
		"australia/sydney", // ids are case-sensitive
		"Australia/Sydney ",
		"Australia",  // a directory, not a zone
		"Australia/", // likewise
		"/Australia/Sydney",
		"../Australia/Sydney",
		// Present in host /usr/share/zoneinfo on many systems but not in the
		// embedded zip: loading them would prove host files are read.
		"posixrules",
		"localtime",
		"right/UTC",
		"posix/Australia/Sydney",
		"zone.tab",
		"leap-seconds.list",
	}
	for _, id := range tests {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			loc, err := LoadZone(id)
			if err == nil {
				t.Fatalf("LoadZone(%q) = %v, want error", id, loc)
			}
			if loc != nil {
				t.Errorf("LoadZone(%q) returned non-nil location with error", id)
			}
			if !errors.Is(err, ErrUnknownZone) {
				t.Errorf("error %v does not wrap ErrUnknownZone", err)
			}
			if id != "" && !strings.Contains(err.Error(), `"`+id+`"`) {
				t.Errorf("error %q does not name the id %q", err, id)
			}
			if id == "" && !strings.Contains(err.Error(), "empty") {
				t.Errorf("error %q does not say the id is empty", err)
			}
		})
	}
}

// TestLoadZoneIgnoresHostZoneinfo points ZONEINFO at a directory whose
// Australia/Sydney is really UTC. The time package would consult it first;
// LoadZone must still return the real Sydney rules from the embedded zip.
// Not parallel: it uses t.Setenv.
func TestLoadZoneIgnoresHostZoneinfo(t *testing.T) {
	dir := t.TempDir()
	utcData, err := zipEntry("Etc/UTC")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "Australia"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Australia", "Sydney"), utcData, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZONEINFO", dir)
	t.Setenv("TZ", "Australia/Sydney")

	// Uncached path, then the public (possibly cached) one.
	for name, load := range map[string]func(string) (*time.Location, error){
		"loadEmbedded": loadEmbedded,
		"LoadZone":     LoadZone,
	} {
		loc, err := load("Australia/Sydney")
		if err != nil {
			t.Fatalf("%s(Australia/Sydney) with fake ZONEINFO: %v", name, err)
		}
		_, off := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC).In(loc).Zone()
		if off != 11*3600 {
			t.Fatalf("%s(Australia/Sydney) offset in January = %ds, want 39600 (AEDT); host ZONEINFO leaked in", name, off)
		}
	}

	// An empty ZONEINFO directory changes nothing either.
	t.Setenv("ZONEINFO", t.TempDir())
	if _, err := loadEmbedded("Asia/Kathmandu"); err != nil {
		t.Fatalf("loadEmbedded with empty ZONEINFO: %v", err)
	}
}

// zipEntry returns the raw TZif bytes of an embedded entry, for tests.
func zipEntry(id string) ([]byte, error) {
	if _, err := loadEmbedded("Etc/UTC"); err != nil {
		return nil, err
	}
	f, ok := zipFiles[id]
	if !ok {
		return nil, errors.New("no entry " + id)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// zoneIDs returns every zone id in the embedded tzdata.
func zoneIDs(t testing.TB) []string {
	t.Helper()
	if _, err := loadEmbedded("Etc/UTC"); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(zipFiles))
	for name, f := range zipFiles {
		if !f.FileInfo().IsDir() {
			ids = append(ids, name)
		}
	}
	return ids
}

func TestAllEmbeddedZonesLoad(t *testing.T) {
	t.Parallel()
	ids := zoneIDs(t)
	if len(ids) < 400 {
		t.Fatalf("only %d zones in embedded tzdata", len(ids))
	}
	for _, id := range ids {
		if _, err := LoadZone(id); err != nil {
			t.Errorf("LoadZone(%q): %v", id, err)
		}
	}
}
