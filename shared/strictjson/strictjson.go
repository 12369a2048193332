package strictjson

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/automation-platform/automation/shared/automation"
)

// Check returns nil when doc — one syntactically valid JSON value (check syntax first: on
// invalid JSON Check returns a CodeMalformed error without a position) — is UTF-8
// (RFC 8259 section 8.1), names no member twice in one object, also in another letter case
// (encoding/json matches names ignoring case; RFC 8259 section 4, I-JSON RFC 7493 section 2.3), and holds
// no "\uXXXX" escape of a lone surrogate (a high one, D800–DBFF, not followed by an escaped
// low one, DC00–DFFF, or a low one alone; I-JSON RFC 7493 section 2.1). Otherwise it returns an
// *automation.Error with Code CodeMalformed whose Field is the member's path
// ("list[1].field") for a repeated member.
func Check(doc []byte) error {
	if err := Text(doc); err != nil {
		return err
	}
	return uniqueNames(doc, true)
}

// CheckExact is Check for documents read into maps (member names kept as sent, so "email"
// and "Email" are two members): names must be unique as written, not ignoring case.
func CheckExact(doc []byte) error {
	if err := Text(doc); err != nil {
		return err
	}
	return uniqueNames(doc, false)
}

// Text is the part of Check that needs no syntax: UTF-8 and no lone surrogate escape. Run
// it before decoding, so a name spoiled by a lone surrogate is reported as such and not as
// an unknown field.
func Text(doc []byte) error {
	if !utf8.Valid(doc) {
		return automation.Errorf(automation.CodeMalformed, "the body is not valid UTF-8 (JSON text must be UTF-8, RFC 8259 section 8.1)")
	}
	if off, ok := loneSurrogate(doc); ok {
		return automation.Errorf(automation.CodeMalformed,
			"a string holds a lone UTF-16 surrogate escape at byte %d (JSON text must be Unicode, I-JSON RFC 7493 section 2.1)", off)
	}
	return nil
}

// loneSurrogate scans the string literals of doc and returns the offset of the first escape
// of an unpaired surrogate.
func loneSurrogate(doc []byte) (int, bool) {
	in := false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\' && i+1 < len(doc):
			if doc[i+1] != 'u' {
				i++ // a one-character escape
				continue
			}
			u, ok := hex4(doc, i+2)
			if !ok {
				i++
				continue
			}
			switch {
			case u >= 0xDC00 && u <= 0xDFFF:
				return i, true
			case u >= 0xD800 && u <= 0xDBFF:
				if j := i + 6; j+1 < len(doc) && doc[j] == '\\' && doc[j+1] == 'u' {
					if l, ok := hex4(doc, j+2); ok && l >= 0xDC00 && l <= 0xDFFF {
						i = j + 5 // the pair
						continue
					}
				}
				return i, true
			}
			i += 5
		}
	}
	return 0, false
}

func hex4(doc []byte, at int) (uint64, bool) {
	if at+4 > len(doc) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(doc[at:at+4]), 16, 16)
	return v, err == nil
}

// frame is one open object or array while uniqueNames walks a document.
type frame struct {
	path    string
	object  bool
	names   map[string]bool // folded member names seen (objects)
	name    string          // the member whose value comes next (objects)
	pending bool            // a name was read, its value comes next (objects)
	index   int             // the next element's index (arrays)
}

// childPath returns the path of the value about to start in f and moves f past it.
func (f *frame) childPath() string {
	if f.object {
		f.pending = false
		if f.path == "" {
			return f.name
		}
		return f.path + "." + f.name
	}
	p := f.path + "[" + strconv.Itoa(f.index) + "]"
	f.index++
	return p
}

func dupMessage(fold bool) string {
	if fold {
		return "is given more than once in the same object (names are matched ignoring case)"
	}
	return "is given more than once in the same object"
}

// uniqueNames walks a JSON document and returns a CodeMalformed error naming the first
// member given twice in one object (compared ignoring case when fold) by its path.
func uniqueNames(doc []byte, fold bool) error {
	if json.Valid(doc) && noRepeatedNames(doc, fold) {
		return nil
	}
	return uniqueNamesSlow(doc, fold)
}

// maxFastMembers bounds the members of one object noRepeatedNames compares pairwise.
const maxFastMembers = 64

// noRepeatedNames is uniqueNames' fast path for a valid JSON doc: one pass over the bytes,
// no token values built. It answers true only when it is sure no object names a member
// twice; anything it does not decide itself — a name with an escape (equal to another only
// once unescaped), a non-ASCII name when folding, an object of more than maxFastMembers
// members, a repeated name — answers false, and uniqueNamesSlow decides and names the path.
func noRepeatedNames(doc []byte, fold bool) bool {
	type obj struct {
		object, expectName bool
		names              [][]byte
	}
	var stack []obj
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; c {
		case '{':
			stack = append(stack, obj{object: true, expectName: true})
		case '[':
			stack = append(stack, obj{})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if top := len(stack) - 1; stack[top].object {
				stack[top].expectName = true
			}
		case '"':
			start, escaped, ascii := i+1, false, true
			for i++; doc[i] != '"'; i++ {
				switch {
				case doc[i] == '\\':
					escaped = true
					i++
				case doc[i] >= 0x80:
					ascii = false
				}
			}
			top := len(stack) - 1
			if top < 0 || !stack[top].object || !stack[top].expectName {
				continue // a string value
			}
			f := &stack[top]
			f.expectName = false
			name := doc[start:i]
			if escaped || (fold && !ascii) || len(f.names) == maxFastMembers {
				return false
			}
			for _, n := range f.names {
				if bytes.Equal(n, name) || fold && bytes.EqualFold(n, name) {
					return false
				}
			}
			f.names = append(f.names, name)
		}
	}
	return true
}

// uniqueNamesSlow walks doc's tokens and names the path of the first repeated member.
func uniqueNamesSlow(doc []byte, fold bool) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return automation.Errorf(automation.CodeMalformed, "the body is not valid JSON: %v", err)
		}
		path := ""
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			if top.object && !top.pending {
				if name, ok := tok.(string); ok { // a member name
					folded := name
					if fold {
						folded = foldName(name)
					}
					if top.names[folded] {
						top.name = name
						return &automation.Error{Code: automation.CodeMalformed, Field: top.childPath(),
							Message: dupMessage(fold)}
					}
					top.names[folded] = true
					top.name, top.pending = name, true
					continue
				}
			}
			if tok != json.Delim('}') && tok != json.Delim(']') {
				path = top.childPath()
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{path: path, object: true, names: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{path: path})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

// foldName maps a member name to one representative of its case-folding class, so that
// foldName(a) == foldName(b) exactly when encoding/json matches a and b to the same field
// (bytes.EqualFold: Unicode simple case folding). strings.ToLower is not that relation: it
// leaves "ſ" (U+017F), which folds with "s", alone, and lowers "İ" (U+0130), which folds
// with nothing, to "i".
func foldName(name string) string {
	return strings.Map(func(r rune) rune {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		return min
	}, name)
}
