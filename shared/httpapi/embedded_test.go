package httpapi_test

import (
	"errors"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
)

// A body type that embeds another (an API body made of a domain input) names the member a
// client sent in a type error, as one that lists the members itself does: encoding/json puts
// the embedded struct's Go name in the path ("Input.rate"), the answer must not.
func TestEmbeddedBodyErrorsNameTheMembersSent(t *testing.T) {
	type Deep struct {
		Level int `json:"level"`
	}
	type Input struct {
		Deep
		Rate  string `json:"rate"`
		Items []struct {
			Deep
			Name string `json:"name"`
		} `json:"items"`
	}
	type Named struct {
		Value int `json:"value"`
	}
	type body struct {
		Input
		Fee   []byte `json:"fee"`
		Named `json:"named"`
		Plain struct {
			Input
		} `json:"plain"`
	}
	for _, c := range []struct{ in, field string }{
		{`{"rate":5}`, "rate"},
		{`{"level":"x"}`, "level"},
		{`{"items":[{"name":1}]}`, "items.name"},
		{`{"items":[{"level":"x"}]}`, "items.level"},
		{`{"named":{"value":"x"}}`, "named.value"},
		{`{"plain":{"rate":5}}`, "plain.rate"},
		{`{"plain":{"level":"x"}}`, "plain.level"},
	} {
		var v body
		err := httpapi.DecodeJSONBytes([]byte(c.in), &v)
		var e *automation.Error
		if !errors.As(err, &e) || e.Code != automation.CodeMalformed || e.Field != c.field {
			t.Errorf("%s: %v, want a Malformed error naming %q", c.in, err, c.field)
		}
	}
}
