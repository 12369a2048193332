package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/automation-platform/automation/shared/automation"
)

// maxCursorBytes bounds a cursor as sent by a client.
const maxCursorBytes = 2048

type cursorEnvelope struct {
	V     int             `json:"v"`
	Query string          `json:"q"`
	Pos   json.RawMessage `json:"p"`
}

// EncodeCursor returns an opaque page cursor holding pos (any JSON-encodable position, such
// as the last Id of the page) for the query named query (e.g. the filters' canonical form),
// so a cursor cannot be reused with other filters. Base64url without padding.
func EncodeCursor(query string, pos any) (string, error) {
	raw, err := json.Marshal(pos)
	if err != nil {
		return "", fmt.Errorf("httpapi: cursor position: %w", err)
	}
	env, err := json.Marshal(cursorEnvelope{V: 1, Query: query, Pos: raw})
	if err != nil {
		return "", fmt.Errorf("httpapi: cursor: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(env), nil
}

// DecodeCursor reads a cursor made by EncodeCursor for the same query into pos. Anything
// else (not base64url, not ours, made for other filters, too long) is a CodeMalformed error
// about field "cursor".
func DecodeCursor(cursor, query string, pos any) error {
	bad := func(why string) error {
		return &automation.Error{Code: automation.CodeMalformed, Field: "cursor", Message: why}
	}
	if len(cursor) > maxCursorBytes {
		return bad("is too long to be a cursor returned by this API")
	}
	env, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return bad("is not a cursor returned by this API")
	}
	var e cursorEnvelope
	if err := DecodeJSONBytes(env, &e); err != nil || e.V != 1 || len(e.Pos) == 0 {
		return bad("is not a cursor returned by this API")
	}
	if e.Query != query {
		return bad("belongs to a query with other filters; start again without a cursor")
	}
	if err := DecodeJSONBytes(e.Pos, pos); err != nil {
		return bad("is not a cursor returned by this API")
	}
	return nil
}
