package reminder

import (
	"testing"

	"github.com/automation-platform/automation/shared/localtime"
)

// The InputHash of each trigger kind is pinned: ensure compares a row's stored hash with the
// one computed now, so a change of the hashed input's members, their order or their JSON
// names would make every open row a conflict, put on support hold (docs/architecture.md#ensure).
// A new input is a new V.
func TestInputHashesArePinned(t *testing.T) {
	t.Parallel()
	set := Setting{Guid: "0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6", TriggerKey: "expiry", Annual: true}
	src := Source{EntityType: "PoliceVetting", EntityGuid: "5d4f8b2a-3c6e-4fa0-9d7c-4e5f6a7b8c9d"}
	z := Zone{BusinessUnitID: "bu-syd"}
	target := localtime.Date{Year: 2026, Month: 10, Day: 5}
	for name, c := range map[string]struct{ got, want string }{
		"date-based": {inputHash(set, src, z, target, 7), "050d2ff086cd0772195e16b28cfcf6ae176ffcf15b71ab2b9b43ce38757a86cd"},
		"threshold":  {thresholdHash(set, src, z, "points:100:once:any"), "81fe40e1bc2960f73dfe7f714d191ba490a3e895d56b6b5e5eeaefdbe2eb1e31"},
		"overdue":    {overdueHash(set, src, z, target), "d7841d28b56b7bc2c1311602713443c8c50b2c96c51faece922568b0b9d7b2bf"},
	} {
		if c.got != c.want {
			t.Errorf("%s: InputHash %s, want %s", name, c.got, c.want)
		}
	}
}
