package strictjson_test

import (
	"errors"
	"testing"

	"github.com/automation-platform/automation/shared/strictjson"
)

// Hostile: Decode promises one JSON value and refuses what follows it (ErrTrailing). It
// asks json.Decoder.More, which answers false for a closing bracket or brace, so a value
// followed by "]" or "}" (a truncated array's tail, a stray brace) is accepted with the tail
// silently dropped, where httpapi.DecodeJSONBytes (Token == io.EOF) and json.Unmarshal refuse
// it. Only white space may follow the value.
func TestHostileDecodeRefusesAClosingBracketAfterTheValue(t *testing.T) {
	for _, doc := range []string{`{"a":1}]`, `{"a":1} }`, `{"a":1}` + "\n]", `{"a":1}]]]`, `{"a":1}}{"a":2}`} {
		var v struct {
			A int `json:"a"`
		}
		if err := strictjson.Decode([]byte(doc), &v); !errors.Is(err, strictjson.ErrTrailing) {
			t.Errorf("Decode(%q) = %v, want ErrTrailing", doc, err)
		}
	}
	var v struct {
		A int `json:"a"`
	}
	if err := strictjson.Decode([]byte("{\"a\":1} \n\t"), &v); err != nil || v.A != 1 {
		t.Fatalf("white space after the value: %v %+v", err, v)
	}
}
