package apidoc_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/api/apidoc"
)

var update = flag.Bool("update", false, "rewrite docs/openapi.json with the bundle")

// bundleFile is the bundle kept in the repository.
const bundleFile = "../../../docs/openapi.json"

// TestBundleFileIsCurrent: docs/openapi.json holds exactly what Bundle returns (`make
// openapi` rewrites it after an API document changed).
func TestBundleFileIsCurrent(t *testing.T) {
	t.Parallel()
	got, err := apidoc.Bundle(apidoc.Sources())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(bundleFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(bundleFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("docs/openapi.json differs from the bundle of the API documents: run `make openapi` and commit the file")
	}
}

// nodeTool returns the path of a pinned npm tool (package.json), skipping the test with
// the one command to run when node_modules is absent.
func nodeTool(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("../../../node_modules/.bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("node_modules/.bin/%s is absent: run `npm ci` in the repository root (make test does) to check the bundle with it", name)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not installed: node_modules/.bin/%s needs it", name)
	}
	return p
}

// TestBundleLintsClean: Redocly CLI's recommended rules (redocly.yaml names every rule
// switched off, and why) find no error and no warning in the bundle, as `make lint` runs
// them. Each API's own document passes too (their tests check them against the routes,
// this checks them against the standard).
func TestBundleLintsClean(t *testing.T) {
	t.Parallel()
	redocly := nodeTool(t, "redocly")
	files := []string{"docs/openapi.json", "shared/api/reportapi/openapi.json"}
	yamls, _ := filepath.Glob("../*/openapi.yaml")
	for _, y := range yamls {
		files = append(files, "shared/api/"+filepath.Base(filepath.Dir(y))+"/openapi.yaml")
	}
	if len(files) < 9 {
		t.Fatalf("found only %v", files)
	}
	cmd := exec.Command(redocly, append([]string{"lint", "--format", "json"}, files...)...)
	cmd.Dir = "../../.."
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	type report struct {
		Totals struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
		} `json:"totals"`
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Source struct {
					Ref string `json:"ref"`
				} `json:"source"`
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	// One report per file.
	dec := json.NewDecoder(bytes.NewReader(out))
	reports, problems := 0, 0
	for dec.More() {
		var r report
		if jerr := dec.Decode(&r); jerr != nil {
			t.Fatalf("redocly lint: %v %v\n%s\n%s", err, jerr, out, stderr.Bytes())
		}
		reports++
		problems += r.Totals.Errors + r.Totals.Warnings
		for _, p := range r.Problems {
			at := ""
			if len(p.Location) > 0 {
				at = p.Location[0].Source.Ref + "#" + p.Location[0].Pointer
			}
			t.Errorf("%s %s: %s (%s)", p.Severity, p.RuleID, p.Message, at)
		}
	}
	if err != nil || problems > 0 || reports != len(files) {
		t.Fatalf("redocly lint: %v, %d problems, %d reports for %d files (fix the document, or switch the rule off in redocly.yaml with a reason)\n%s", err, problems, reports, len(files), stderr.Bytes())
	}
}

// TestTypedClientGenerates: openapi-typescript (pinned in package.json) turns the bundle
// into TypeScript types, every operation gets its operationId as a method name, and the
// TypeScript compiler accepts the result under --strict.
func TestTypedClientGenerates(t *testing.T) {
	t.Parallel()
	gen := nodeTool(t, "openapi-typescript")
	tsc := nodeTool(t, "tsc")
	out := filepath.Join(t.TempDir(), "automation.d.ts")
	cmd := exec.Command(gen, "docs/openapi.json", "--output", out)
	cmd.Dir = "../../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("openapi-typescript: %v\n%s", err, b)
	}
	types, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := apidoc.Bundle(apidoc.Sources())
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &parsed); err != nil {
		t.Fatal(err)
	}
	n := 0
	for p, item := range parsed.Paths {
		if !bytes.Contains(types, []byte(`"`+p+`": {`)) {
			t.Errorf("the client has no path %s", p)
		}
		for m, raw := range item {
			var op struct {
				OperationID string `json:"operationId"`
			}
			if !slices.Contains([]string{"get", "put", "post", "delete", "patch"}, m) {
				continue
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			n++
			if op.OperationID == "" || !bytes.Contains(types, []byte("\n    "+op.OperationID+": {")) {
				t.Errorf("%s %s: the client has no operation named %q", m, p, op.OperationID)
			}
		}
	}
	if n < 60 {
		t.Fatalf("only %d operations in the bundle", n)
	}
	cmd = exec.Command(tsc, "--noEmit", "--strict", "--skipLibCheck", "false", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc rejects the generated client: %v\n%s", err, b)
	}
}

// TestBundleRules: the merge rules of the package doc, on two small documents.
func TestBundleRules(t *testing.T) {
	t.Parallel()
	a := `openapi: 3.1.0
info: {title: A, version: "1", description: The A API.}
servers: [{url: "http://127.0.0.1:7071"}]
security: [{key: []}]
paths:
  /a:
    get:
      operationId: getA
      responses:
        '200': {$ref: '#/components/responses/R'}
` + components("key", "one", "string")
	b := `openapi: 3.1.0
info: {title: B, version: "1"}
security: [{other: []}]
paths:
  /b:
    get:
      operationId: getB
      tags: [Extra]
      responses:
        '200': {$ref: '#/components/responses/R'}
        '204': {description: none, content: {application/json: {schema: {$ref: '#/components/schemas/Same'}}}}
    post:
      operationId: postB
      security: []
      responses:
        '200': {$ref: '#/components/responses/R'}
` + components("other", "two", "integer")
	out, err := apidoc.Bundle([]apidoc.Source{{Tag: "A", Raw: []byte(a)}, {Tag: "B", Raw: []byte(b)}})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tags       []map[string]string                  `json:"tags"`
		Servers    []map[string]any                     `json:"servers"`
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components map[string]map[string]any            `json:"components"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	checks := []struct{ what, got, want string }{
		// X differs: B's is renamed, and R and Box, which point at it, with it (Box sorts
		// before X: renamed on the second pass).
		{"schemas", js(doc.Components["schemas"]), `{"BBox":{"items":{"$ref":"#/components/schemas/BX"},"type":"array"},"BX":{"type":"integer"},` +
			`"Box":{"items":{"$ref":"#/components/schemas/X"},"type":"array"},"Same":{"type":"boolean"},"X":{"type":"string"}}`},
		{"responses", js(doc.Components["responses"]), `{"BR":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/BX"}}},"description":"r"},"R":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/X"}}},"description":"r"}}`},
		{"B's refs", js(doc.Paths["/b"]["get"]["responses"]), `{"200":{"$ref":"#/components/responses/BR"},"204":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Same"}}},"description":"none"}}`},
		{"A's refs", js(doc.Paths["/a"]["get"]["responses"]), `{"200":{"$ref":"#/components/responses/R"}}`},
		// One scheme per kind; B's requirement renamed to it; an operation's own kept.
		{"schemes", js(doc.Components["securitySchemes"]), `{"key":{"description":"one","in":"header","name":"x-functions-key","type":"apiKey"}}`},
		{"B's security", js(doc.Paths["/b"]["get"]["security"]), `[{"key":[]}]`},
		{"B's own security", js(doc.Paths["/b"]["post"]["security"]), `[]`},
		{"A's security", js(doc.Paths["/a"]["get"]["security"]), `[{"key":[]}]`},
		{"tags", js(doc.Paths["/b"]["get"]["tags"]), `["B","Extra"]`},
		{"tag list", js(doc.Tags), `[{"description":"A\n\nThe A API.","name":"A"},{"description":"B","name":"B"}]`},
		{"servers", js(doc.Servers), `[{"url":"http://127.0.0.1:7071"}]`},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.what, c.got, c.want)
		}
	}
	// What cannot be bundled is an error naming it.
	for _, bad := range []struct{ name, doc, want string }{
		{"path twice", strings.Replace(b, "/b:", "/a:", 1), "path /a is in another document too"},
		{"operationId twice", strings.Replace(b, "operationId: getB", "operationId: getA", 1), "operationId getA"},
		{"no operationId", strings.Replace(b, "      operationId: postB\n", "", 1), "POST /b has no operationId"},
		{"dangling $ref", strings.Replace(b, "'#/components/schemas/Same'", "'#/components/schemas/Gone'", 1), `"#/components/schemas/Gone" does not name a component`},
		{"not YAML", "{", "apidoc: B:"},
	} {
		_, err := apidoc.Bundle([]apidoc.Source{{Tag: "A", Raw: []byte(a)}, {Tag: "B", Raw: []byte(bad.doc)}})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want an error with %q", bad.name, err, bad.want)
		}
	}
}

// Every guarded route can answer 403 Forbidden (its credential lacks the route's role,
// docs/security.md#roles) and 429 TooManyRequests (an ingest or stream quota, a throttled
// key), through the one guard in shared/httpapi. A Problem schema whose code enum lacks them
// makes those answers break the contract a generated client validates against (the inbound
// SMS webhook's 429 did: TestInboundChargesEveryEventBeforeWriting).
func TestProblemCodesIncludeTheGuardsCodes(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(bundleFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for name, s := range doc.Components.Schemas {
		enum := s.Properties["code"].Enum
		if !strings.HasSuffix(name, "Problem") || enum == nil {
			continue
		}
		for _, code := range []string{"Unauthorized", "Forbidden", "TooManyRequests", "ContentTooLarge"} {
			if !slices.Contains(enum, code) {
				t.Errorf("%s's code enum lacks %s", name, code)
			}
		}
	}
}

// components is the components section of the bundling test's two documents: a security
// scheme named scheme (its description desc), a response R, and the schemas X (of type x:
// the clash Bundle must rename), Same and Box (which refers to X).
func components(scheme, desc, x string) string {
	return `components:
  securitySchemes:
    ` + scheme + `: {type: apiKey, in: header, name: x-functions-key, description: ` + desc + `}
  responses:
    R:
      description: r
      content: {application/json: {schema: {$ref: '#/components/schemas/X'}}}
  schemas:
    X: {type: ` + x + `}
    Same: {type: boolean}
    Box: {type: array, items: {$ref: '#/components/schemas/X'}}
`
}
