package strictjson_test

import (
	"encoding/json"
	"testing"

	"github.com/automation-platform/automation/shared/strictjson"
)

// Check matches member names the way encoding/json does (Unicode simple case folding, as in
// bytes.EqualFold), not by strings.ToLower: "ſtatus" (U+017F LATIN SMALL LETTER LONG S)
// lowers to itself, yet encoding/json fills the Status field from it, so
// {"status":"Active","ſtatus":"Paused"} would be decoded as Paused while a reader of the
// first member sees Active.
func TestCheckFoldsNamesLikeEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{"status":"Active","ſtatus":"Paused"}`,
		`{"ſtatus":"Active","STATUS":"Paused"}`,
		`{"key":1,"\u212Aey":2}`, // KELVIN SIGN
		`{"list":[{"businessUnitId":"a","buſineſſUnitId":"b"}]}`,
	} {
		var v struct{ Status, Key string }
		_ = json.Unmarshal([]byte(doc), &v) // encoding/json takes both for one field
		if err := strictjson.Check([]byte(doc)); err == nil {
			t.Errorf("Check(%s) = nil; encoding/json reads both members into one field", doc)
		}
	}
	// Names encoding/json keeps apart stay apart.
	for _, doc := range []string{`{"a":1,"b":2}`, `{"ß":1,"ss":2}`, `{"İd":1,"id":2}`} {
		if err := strictjson.Check([]byte(doc)); err != nil {
			t.Errorf("Check(%s) = %v", doc, err)
		}
	}
}
