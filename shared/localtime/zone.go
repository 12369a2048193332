package localtime

import (
	"archive/zip"
	"bytes"
	_ "embed" // for the embedded zoneinfo.zip
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"
)

// TZDataVersion is the IANA tzdata release of the embedded zoneinfo.zip
// (copied from Go 1.26.8's $GOROOT/lib/time/zoneinfo.zip). Store it next to
// computed UTC instants: when it changes, pending rows are recomputed from
// their stored local intent (docs/architecture.md#dst-product-rule).
const TZDataVersion = "2025c"

//go:embed zoneinfo.zip
var zoneinfoZip []byte

// ErrUnknownZone is wrapped by the error [LoadZone] returns when the id is
// empty, "Local", or not present in the embedded tzdata; test with
// errors.Is.
var ErrUnknownZone = errors.New("unknown time zone")

var (
	zipOnce  sync.Once
	zipFiles map[string]*zip.File
	zipErr   error

	zoneCache sync.Map // id -> *time.Location
)

// LoadZone returns the location for an IANA zone id (e.g. "Australia/Sydney")
// built from the embedded tzdata ([TZDataVersion]) only — never from host
// files, the ZONEINFO variable or the time/tzdata fallback. Results are
// cached and shared; callers must not rely on pointer identity except that
// "UTC" returns [time.UTC].
//
// It returns an error naming the id, wrapping [ErrUnknownZone], for "",
// "Local" (the host's zone is deliberately not available) and ids absent from
// the embedded tzdata.
func LoadZone(id string) (*time.Location, error) {
	if id == "UTC" {
		return time.UTC, nil
	}
	if v, ok := zoneCache.Load(id); ok {
		return v.(*time.Location), nil
	}
	loc, err := loadEmbedded(id)
	if err != nil {
		return nil, err
	}
	v, _ := zoneCache.LoadOrStore(id, loc)
	return v.(*time.Location), nil
}

// ZoneIDs returns the ids of the embedded tzdata's zones, sorted (for a "did you mean" on
// an unknown id). Nil when the embedded zip cannot be read.
func ZoneIDs() []string {
	openZip()
	if zipErr != nil {
		return nil
	}
	out := make([]string, 0, len(zipFiles))
	for name, f := range zipFiles {
		if !f.FileInfo().IsDir() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// openZip indexes the embedded zip once.
func openZip() {
	zipOnce.Do(func() {
		r, err := zip.NewReader(bytes.NewReader(zoneinfoZip), int64(len(zoneinfoZip)))
		if err != nil {
			zipErr = fmt.Errorf("localtime: embedded zoneinfo.zip: %w", err)
			return
		}
		zipFiles = make(map[string]*zip.File, len(r.File))
		for _, f := range r.File {
			zipFiles[f.Name] = f
		}
	})
}

// loadEmbedded builds id's location from the embedded zip, uncached.
func loadEmbedded(id string) (*time.Location, error) {
	switch id {
	case "":
		return nil, fmt.Errorf("localtime: %w: empty zone id", ErrUnknownZone)
	case "Local":
		return nil, fmt.Errorf("localtime: %w %q: the host zone is not allowed; use an IANA id", ErrUnknownZone, id)
	}
	openZip()
	if zipErr != nil {
		return nil, zipErr
	}
	f, ok := zipFiles[id]
	if !ok || f.FileInfo().IsDir() {
		return nil, fmt.Errorf("localtime: %w %q (not in embedded tzdata %s)", ErrUnknownZone, id, TZDataVersion)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("localtime: zone %q: %w", id, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("localtime: zone %q: %w", id, err)
	}
	loc, err := time.LoadLocationFromTZData(id, data)
	if err != nil {
		return nil, fmt.Errorf("localtime: zone %q: %w", id, err)
	}
	return loc, nil
}
