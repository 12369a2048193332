package localtime

import (
	_ "embed" // for the embedded CLDR windowsZones data
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// windowsZonesJSON is Unicode CLDR's supplemental/windowsZones.json, vendored from the
// npm package cldr-core with its licence (cldr/README.md says how to refresh it).
//
//go:embed cldr/windowsZones.json
var windowsZonesJSON []byte

var (
	windowsOnce sync.Once
	windowsMap  map[string]string // Windows id → IANA id (territory 001)
	windowsCLDR string
	windowsErr  error
)

func loadWindowsZones() {
	var doc struct {
		Supplemental struct {
			Version struct {
				CLDR string `json:"_cldrVersion"`
			} `json:"version"`
			WindowsZones struct {
				MapTimezones []struct {
					MapZone struct {
						Other     string `json:"_other"`
						Type      string `json:"_type"`
						Territory string `json:"_territory"`
					} `json:"mapZone"`
				} `json:"mapTimezones"`
			} `json:"windowsZones"`
		} `json:"supplemental"`
	}
	if err := json.Unmarshal(windowsZonesJSON, &doc); err != nil {
		windowsErr = fmt.Errorf("localtime: embedded CLDR windowsZones.json: %w", err)
		return
	}
	windowsCLDR = doc.Supplemental.Version.CLDR
	windowsMap = map[string]string{}
	for _, m := range doc.Supplemental.WindowsZones.MapTimezones {
		z := m.MapZone
		if z.Territory != "001" || z.Other == "" {
			continue
		}
		// The 001 row names one zone; take the first if CLDR ever lists more.
		windowsMap[z.Other] = strings.Fields(z.Type)[0]
	}
	if len(windowsMap) == 0 {
		windowsErr = errors.New("localtime: embedded CLDR windowsZones.json has no territory-001 mappings")
	}
}

// WindowsZonesCLDRVersion returns the CLDR release of the embedded Windows zone mapping
// (e.g. "48").
func WindowsZonesCLDRVersion() string {
	windowsOnce.Do(loadWindowsZones)
	return windowsCLDR
}

// WindowsZoneIDs returns every Windows time-zone id the embedded CLDR mapping knows,
// sorted.
func WindowsZoneIDs() []string {
	windowsOnce.Do(loadWindowsZones)
	return slices.Sorted(maps.Keys(windowsMap))
}

// ResolveZoneID maps a time-zone id as a user gives it to the IANA id the platform stores
// (docs/architecture.md#inputs: "IANA id; Windows ids such as AUS Eastern Standard Time accepted
// and mapped through CLDR data"). An IANA id present in the embedded tzdata is returned
// unchanged with windows=false; a Windows id is mapped through CLDR's windowsZones
// (territory 001, the world-wide default: "AUS Eastern Standard Time" → "Australia/Sydney")
// with windows=true. Matching of Windows ids is exact (they are case-sensitive names).
// The error wraps [ErrUnknownZone] for anything else ("", "Local", unknown names).
func ResolveZoneID(id string) (iana string, windows bool, err error) {
	if _, err := LoadZone(id); err == nil {
		return id, false, nil
	}
	windowsOnce.Do(loadWindowsZones)
	if windowsErr != nil {
		return "", false, windowsErr
	}
	if mapped, ok := windowsMap[id]; ok {
		if _, err := LoadZone(mapped); err != nil {
			return "", true, fmt.Errorf("localtime: Windows zone %q maps to %q: %w", id, mapped, err)
		}
		return mapped, true, nil
	}
	return "", false, fmt.Errorf("localtime: %w %q: neither an IANA id in tzdata %s nor a Windows id in CLDR %s windowsZones",
		ErrUnknownZone, id, TZDataVersion, windowsCLDR)
}
