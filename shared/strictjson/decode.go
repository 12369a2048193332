package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// ErrTrailing is Decode's error for a document with more after its value. Its text,
// "trailing data", is what callers that wrap it ("delivery fact: trailing data") show.
var ErrTrailing = errors.New("trailing data")

// Decode decodes the JSON value at the start of doc into v as encoding/json does, except
// that a member v has no field for is an error (json.Decoder.DisallowUnknownFields: `json:
// unknown field "x"`), and so is more after the value: ErrTrailing (only white space may
// follow it: another value, a stray "]" or "}" are refused). The decoder's error
// is returned as it is, for the caller to wrap. Decode does not apply Check: call it too
// where a repeated member or a lone surrogate matters.
func Decode(doc []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return ErrTrailing // another value, or a stray "]" or "}" (json.Decoder.More would miss those)
	}
	return nil
}
