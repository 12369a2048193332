package strictjson

import (
	"fmt"
	"strings"
	"testing"
)

// The fast path decides exactly as the token walk does: the same error (path and message)
// or none, for repeated names at every depth, names equal only once unescaped, names equal
// ignoring case (Check) but not as written (CheckExact), strings holding braces, quotes and
// commas, arrays of objects, wide objects and invalid JSON.
func TestFastPathAgreesWithTheTokenWalk(t *testing.T) {
	wide := func(n int, dup bool) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"m%d":%d`, i, i)
		}
		if dup {
			b.WriteString(`,"m3":0`)
		}
		b.WriteString("}")
		return b.String()
	}
	docs := []string{
		`{}`, `[]`, `"x"`, `1`, `null`, `{"a":1,"b":2}`, `{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`,
		`{"a":[{"b":1},{"b":2}]}`, `{"a":[{"b":1,"b":2}]}`, `{"a":"\u0061","\u0061":1}`, `{"a":1,"\u0061":2}`,
		`{"Email":1,"email":2}`, `{"É":1,"é":2}`, `{"a":"{\"a\":1,","b":"}"}`, `{"a\"b":1,"a\"b":2}`,
		`{"x":{"a":1},"y":{"a":1}}`, `[{"a":1,"a":1}]`, `{"a":1,}`, `{"a":1`, `{"a" 1}`, `{"a":1}{`,
		`{"a":[1,2,{"c":[{"d":1,"e":{"d":2}}]}],"c":3}`, `{"a":1, "b" : { "a" : 2 , "b":[ ] } , "a":3}`,
		wide(64, false), wide(65, false), wide(64, true), wide(200, true), "{\"a\":1,\n\t\"b\":2}",
	}
	for _, fold := range []bool{false, true} {
		for _, d := range docs {
			got, want := uniqueNames([]byte(d), fold), uniqueNamesSlow([]byte(d), fold)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("fold %v %.60s: fast %v, token walk %v", fold, d, got, want)
			}
		}
	}
}

func FuzzFastPathAgreesWithTheTokenWalk(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"C":2}]}}`, `{"\u0061":1,"a":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, d string) {
		for _, fold := range []bool{false, true} {
			if got, want := uniqueNames([]byte(d), fold), uniqueNamesSlow([]byte(d), fold); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("fold %v %q: fast %v, token walk %v", fold, d, got, want)
			}
		}
	})
}
