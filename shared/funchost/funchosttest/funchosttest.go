package funchosttest

import (
	"testing"

	"github.com/automation-platform/automation/shared/funchost"
)

// Folders loads the function folders under dir (from a package under shared/: "../../functions")
// with funchost.LoadFunctionFolders, and fails the test if they do not load or there are none.
func Folders(t testing.TB, dir string) []funchost.FunctionDef {
	t.Helper()
	defs, err := funchost.LoadFunctionFolders(dir)
	if err != nil {
		t.Fatalf("function folders %s: %v", dir, err)
	}
	if len(defs) == 0 {
		t.Fatalf("no function folders found under %s", dir)
	}
	return defs
}
