package gateway_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/gateway"
)

// A data schema whose $ref chain loops back without descending into the data (a reference
// cycle) would fail every event of its type at ingest with "reference cycle" as if the event
// were wrong; it is refused when saved, naming the member where the loop is, while a
// recursion that descends into the data (a tree) is accepted.
func TestDefinitionSchemaReferenceCycleRefused(t *testing.T) {
	ck := gateway.Checker{}
	for name, tc := range map[string]struct{ schema, pointer string }{
		"self":        {`{"$ref":"#"}`, "/schema"},
		"mutual":      {`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, "/schema/$defs/"},
		"nested only": {`{"type":"object","properties":{"x":{"$ref":"#/$defs/x"}},"$defs":{"x":{"not":{"$ref":"#/$defs/x"}}}}`, "/schema/$defs/x"},
	} {
		def := `{"eventType":"Loop","class":"DIRECT","schema":` + tc.schema + `}`
		_, err := ck.CheckDefinition([]byte(def))
		var r *gateway.Refusal
		if !errors.As(err, &r) || !strings.HasPrefix(r.Pointer, tc.pointer) || !strings.Contains(r.Reason, "cycle") {
			t.Errorf("%s: %v, want a refusal at %s naming the cycle", name, err, tc.pointer)
		}
	}
	for name, schema := range map[string]string{
		"tree":       `{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#"}}}}`,
		"linked":     `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		"meta-draft": `{"$ref":"https://json-schema.org/draft/2020-12/schema"}`,
	} {
		def := `{"eventType":"Tree","class":"DIRECT","schema":` + schema + `}`
		if _, err := ck.CheckDefinition([]byte(def)); err != nil {
			t.Errorf("%s: %v, want accepted", name, err)
		}
	}
}
