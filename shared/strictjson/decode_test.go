package strictjson_test

import (
	"errors"
	"testing"

	"github.com/automation-platform/automation/shared/strictjson"
)

// Decode takes one value with known members: an unknown member and a second value are
// refused (the second as ErrTrailing, which callers tell apart), white space after the value
// is not, and the value is decoded as encoding/json decodes it.
func TestDecodeTakesOneValueOfKnownMembers(t *testing.T) {
	type doc struct {
		Name string `json:"name"`
	}
	for _, c := range []struct {
		in, want string // want: the error's text, "" for none
		trailing bool
	}{
		{in: `{"name":"a"}`},
		{in: " {\"name\":\"a\"} \n\t"},
		{in: `{"name":"a","other":1}`, want: `json: unknown field "other"`},
		{in: `{"name":"a"} {}`, want: "trailing data", trailing: true},
		{in: `{"name":"a"}x`, want: "trailing data", trailing: true},
		{in: `{"name":1}`, want: "json: cannot unmarshal number into Go struct field doc.name of type string"},
		{in: ``, want: "EOF"},
	} {
		var d doc
		err := strictjson.Decode([]byte(c.in), &d)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want || errors.Is(err, strictjson.ErrTrailing) != c.trailing {
			t.Errorf("Decode(%q) = %v, want %q (ErrTrailing %v)", c.in, err, c.want, c.trailing)
		}
		if err == nil && d.Name != "a" {
			t.Errorf("Decode(%q) decoded %+v", c.in, d)
		}
	}
}
