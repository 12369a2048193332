package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/automation-platform/automation/shared/automation"
)

// DefaultMaxBodyBytes bounds a request body (1 MiB) unless Options.MaxBodyBytes says otherwise.
const DefaultMaxBodyBytes = 1 << 20

// WriteJSON writes v as JSON with status. Errors while writing are the client's problem
// (connection gone) and are ignored; v must marshal (a programming error otherwise panics
// in tests, 500 in production).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		WriteProblem(w, ProblemOf(fmt.Errorf("httpapi: marshal response: %w", err)))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// CodeContentTooLarge is the code of a request body over the API's limit (HTTP 413).
const CodeContentTooLarge automation.ErrorCode = "ContentTooLarge"

// tooLarge is the error of a body over limit bytes.
func tooLarge(limit int64) error {
	return &automation.Error{Code: CodeContentTooLarge, Message: fmt.Sprintf("the body is larger than %d bytes", limit)}
}

// ReadBody reads the whole request body. A body over the API's limit (Options.MaxBodyBytes,
// enforced by API.Handler) is a CodeContentTooLarge error (413), a failed read CodeMalformed.
func ReadBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			return nil, tooLarge(big.Limit)
		}
		return nil, automation.Errorf(automation.CodeMalformed, "reading the body: %v", err)
	}
	return body, nil
}

func checkContentType(r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt := strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
		if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
			return automation.Errorf(automation.CodeMalformed, "Content-Type %q is not application/json", ct)
		}
	}
	return nil
}

// DecodeJSON reads exactly one JSON value from the request body into v. Unknown fields,
// trailing data, an empty body and a wrong Content-Type (anything but application/json or
// a +json type; missing is accepted) are CodeMalformed errors that name the offending
// field where the decoder knows it; a body over the limit is CodeContentTooLarge (413).
func DecodeJSON(r *http.Request, v any) error {
	if err := checkContentType(r); err != nil {
		return err
	}
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	return DecodeJSONBytes(body, v)
}

// DecodeOptionalJSON is DecodeJSON for a body that may be left out: an empty body (also a
// chunked one, whatever Content-Length said) leaves v unchanged and returns nil; a
// present one follows every rule of DecodeJSON.
func DecodeOptionalJSON(r *http.Request, v any) error {
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := checkContentType(r); err != nil {
		return err
	}
	return DecodeJSONBytes(body, v)
}

// DecodeJSONBytes is DecodeJSON on a body already read. Besides DecodeJSON's rules it
// rejects (CodeMalformed) bytes that are not UTF-8 and an object naming a member twice,
// also in another letter case (encoding/json matches names ignoring case and keeps the last
// one, so {"id":"a","ID":"b"} would say two things at once; RFC 8259 section 4, I-JSON RFC 7493 section 2).
func DecodeJSONBytes(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return automation.Errorf(automation.CodeMalformed, "the body is empty; a JSON object is required")
	}
	if !utf8.Valid(body) {
		return automation.Errorf(automation.CodeMalformed, "the body is not valid UTF-8 (JSON text must be UTF-8, RFC 8259 section 8.1)")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return malformedJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return automation.Errorf(automation.CodeMalformed, "the body holds more than one JSON value")
	}
	return checkUniqueNames(body)
}

// jsonFrame is one open object or array while checkUniqueNames walks a document.
type jsonFrame struct {
	path    string
	object  bool
	names   map[string]bool // folded member names seen (objects)
	name    string          // the member whose value comes next (objects)
	pending bool            // a name was read, its value comes next (objects)
	index   int             // the next element's index (arrays)
}

// childPath returns the path of the value about to start in f and moves f past it.
func (f *jsonFrame) childPath() string {
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

// checkUniqueNames walks a syntactically valid JSON document and returns a CodeMalformed
// error naming the first member given twice in one object (compared ignoring case) by its
// path, e.g. "list[1].field".
func checkUniqueNames(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []*jsonFrame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil { // cannot happen after a successful Decode; refuse rather than pass
			return malformedJSON(err)
		}
		var top *jsonFrame
		path := ""
		if len(stack) > 0 {
			top = stack[len(stack)-1]
			if top.object && !top.pending {
				if name, ok := tok.(string); ok { // a member name
					folded := strings.ToLower(name)
					if top.names[folded] {
						top.name = name
						return &automation.Error{Code: automation.CodeMalformed, Field: top.childPath(),
							Message: "is given more than once in the same object (names are matched ignoring case)"}
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
			stack = append(stack, &jsonFrame{path: path, object: true, names: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &jsonFrame{path: path})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

func malformedJSON(err error) error {
	var (
		syn  *json.SyntaxError
		typ  *json.UnmarshalTypeError
		text = err.Error()
	)
	switch {
	case errors.As(err, &syn):
		return automation.Errorf(automation.CodeMalformed, "the body is not valid JSON (at byte %d): %v", syn.Offset, syn)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "(body)"
		}
		return &automation.Error{Code: automation.CodeMalformed, Field: field,
			Message: fmt.Sprintf("must be a JSON %s, not %s", jsonKind(typ.Type.Kind().String()), typ.Value)}
	case strings.HasPrefix(text, "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(text, "json: unknown field "), `"`)
		return &automation.Error{Code: automation.CodeMalformed, Field: name, Message: "unknown field"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return automation.Errorf(automation.CodeMalformed, "the body is truncated JSON")
	}
	return automation.Errorf(automation.CodeMalformed, "the body is not valid JSON: %v", err)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "integer"
	case "float32", "float64":
		return "number"
	}
	return goKind
}
