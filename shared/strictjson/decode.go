package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrTrailing is Decode's error for a document with more after its value. Its text,
// "trailing data", is what callers that wrap it ("delivery fact: trailing data") show.
var ErrTrailing = errors.New("trailing data")

// Decode decodes the JSON value at the start of doc into v as encoding/json does, except
// that a member v has no field for is an error (json.Decoder.DisallowUnknownFields: `json:
// unknown field "x"`), and so is more after the value: ErrTrailing (json.Decoder.More, so
// white space or a closing bracket may follow, another value may not). The decoder's error
// is returned as it is, for the caller to wrap. Decode does not apply Check: call it too
// where a repeated member or a lone surrogate matters.
func Decode(doc []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return ErrTrailing
	}
	return nil
}
