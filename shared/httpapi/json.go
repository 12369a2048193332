package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/strictjson"
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

// checkContentType: a JSON body is application/json (strictjson.MediaType, the one rule of
// every API; a missing Content-Type is taken as JSON), else 415.
func checkContentType(r *http.Request) error {
	_, err := strictjson.MediaType(r.Header.Get("Content-Type"), strictjson.MediaTypeJSON)
	return err
}

// DecodeJSON reads exactly one JSON value from the request body into v. Unknown fields,
// trailing data and an empty body are CodeMalformed errors that name the offending field
// where the decoder knows it; a Content-Type other than application/json (missing is
// accepted) is CodeUnsupportedMediaType (415); a body over the limit is
// CodeContentTooLarge (413).
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
// rejects (CodeMalformed) what strictjson.Check refuses: bytes that are not UTF-8, an object
// naming a member twice, also in another letter case (encoding/json matches names ignoring
// case and keeps the last one, so {"id":"a","ID":"b"} would say two things at once), and a
// lone UTF-16 surrogate escape such as "\ud800" (encoding/json would store U+FFFD).
func DecodeJSONBytes(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return automation.Errorf(automation.CodeMalformed, "the body is empty; a JSON object is required")
	}
	// Before decoding: the decoder would report invalid bytes less clearly, and a name
	// spoiled by a lone surrogate as an unknown field.
	if err := strictjson.Text(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return malformedJSON(err, reflect.TypeOf(v))
	}
	if _, err := dec.Token(); err != io.EOF {
		return automation.Errorf(automation.CodeMalformed, "the body holds more than one JSON value")
	}
	return strictjson.Check(body)
}

// malformedJSON is the CodeMalformed error of a body that did not decode into a value of type
// t, naming the member at fault as the body names it (memberPath).
func malformedJSON(err error, t reflect.Type) error {
	var (
		syn  *json.SyntaxError
		typ  *json.UnmarshalTypeError
		text = err.Error()
	)
	switch {
	case errors.As(err, &syn):
		return automation.Errorf(automation.CodeMalformed, "the body is not valid JSON (at byte %d): %v", syn.Offset, syn)
	case errors.As(err, &typ):
		field := memberPath(t, typ.Field)
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

// memberPath is a decoding error's path (json.UnmarshalTypeError.Field) as the body names the
// member: encoding/json (Go 1.24 on) puts the Go name of each embedded struct on the way in
// the path ("PolicyInput.rate"), though its members are the embedding struct's own in the
// JSON ("rate"). So a body type that embeds a domain type reports the members a client sent,
// as one that lists them. A segment is dropped only where t has an embedded struct of that Go
// name without a JSON name of its own; when t also has a member of that JSON name, the
// segment is the embedded struct's only if the next one names a member of the embedded
// struct and not of that member. Past a segment it cannot follow, the path is kept.
func memberPath(t reflect.Type, path string) string {
	segs := strings.Split(path, ".")
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		t = structOf(t)
		if t == nil {
			out = append(out, seg)
			continue
		}
		member := memberType(t, seg, false)
		if f, ok := t.FieldByName(seg); ok && f.Anonymous && len(f.Index) == 1 && jsonName(f) == "" {
			if member == nil || i+1 < len(segs) && memberType(structOf(f.Type), segs[i+1], true) != nil && memberType(structOf(member), segs[i+1], true) == nil {
				t = f.Type // an embedded struct: its members are t's
				continue
			}
		}
		out = append(out, seg)
		t = member
	}
	return strings.Join(out, ".")
}

// structOf is t with pointers, slices, arrays and maps taken off (their elements are what a
// path names next), or nil when that is not a struct.
func structOf(t reflect.Type) reflect.Type {
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

// memberType is the type of struct t's member that a path segment names (its JSON name, or
// its Go name without one), nil when t (nil allowed) has none; with embedded, an embedded
// struct of that Go name counts too (a path may go on through it).
func memberType(t reflect.Type, seg string, embedded bool) reflect.Type {
	if t == nil {
		return nil
	}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() {
			continue
		}
		if embedded && f.Anonymous && len(f.Index) == 1 && jsonName(f) == "" && f.Name == seg {
			return f.Type
		}
		if !f.Anonymous && (jsonName(f) == seg || jsonName(f) == "" && f.Name == seg) {
			return f.Type
		}
	}
	return nil
}

// jsonName is the member name f's json tag gives it ("" for none).
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}
