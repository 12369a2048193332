package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

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

// DecodeJSON reads exactly one JSON value from the request body into v. Unknown fields,
// trailing data, an empty body, a wrong Content-Type (anything but application/json or a
// +json type; missing is accepted) and bodies over the limit are CodeMalformed errors that
// name the offending field where the decoder knows it.
func DecodeJSON(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt := strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
		if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
			return automation.Errorf(automation.CodeMalformed, "Content-Type %q is not application/json", ct)
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return automation.Errorf(automation.CodeMalformed, "the body is larger than %d bytes", tooBig.Limit)
		}
		return automation.Errorf(automation.CodeMalformed, "reading the body: %v", err)
	}
	return DecodeJSONBytes(body, v)
}

// DecodeJSONBytes is DecodeJSON on a body already read.
func DecodeJSONBytes(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return automation.Errorf(automation.CodeMalformed, "the body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return malformedJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return automation.Errorf(automation.CodeMalformed, "the body holds more than one JSON value")
	}
	return nil
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
