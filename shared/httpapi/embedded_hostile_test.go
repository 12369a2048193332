package httpapi_test

import (
	"errors"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
)

// Hostile: memberPath on shapes the first test does not try. A map of bodies that embed a
// struct, an embedded pointer, and a member whose JSON name is the Go name
// of an embedded struct (a segment the client sent, not encoding/json's).
func TestHostileEmbeddedBodyErrorsNameTheMembersSent(t *testing.T) {
	type Deep struct {
		Level int `json:"level"`
	}
	type Input struct {
		Deep
		Rate string `json:"rate"`
	}
	type Other struct {
		V int `json:"v"`
	}
	type body struct {
		*Input
		ByKey map[string]Input `json:"byKey"`
	}
	type clash struct {
		Deep
		Clash Other `json:"Deep"` // a member named as the Go name of the embedded struct
	}
	for _, c := range []struct{ in, field string }{
		{`{"rate":5}`, "rate"},
		{`{"level":"x"}`, "level"},
		// encoding/json names no map key (as no array index): the map's member, then the
		// element's.
		{`{"byKey":{"k":{"rate":5}}}`, "byKey.rate"},
		{`{"byKey":{"k":{"level":"x"}}}`, "byKey.level"},
	} {
		var v body
		err := httpapi.DecodeJSONBytes([]byte(c.in), &v)
		var e *automation.Error
		if !errors.As(err, &e) || e.Code != automation.CodeMalformed || e.Field != c.field {
			t.Errorf("%s: %v (field %q), want a Malformed error naming %q", c.in, err, fieldOf(err), c.field)
		}
	}
	for _, c := range []struct{ in, field string }{
		{`{"level":"x"}`, "level"},
		{`{"Deep":{"v":"x"}}`, "Deep.v"},
	} {
		var v clash
		err := httpapi.DecodeJSONBytes([]byte(c.in), &v)
		if fieldOf(err) != c.field {
			t.Errorf("%s: %v (field %q), want a Malformed error naming %q", c.in, err, fieldOf(err), c.field)
		}
	}
}

func fieldOf(err error) string {
	var e *automation.Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}
