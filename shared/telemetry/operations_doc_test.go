package telemetry_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The repository's root, from this package's directory.
const repoRoot = "../.."

var (
	// spanStart finds the name of every span the product starts: the first string literal of
	// a telemetry.Start or StartLinked call ("publish " of "publish "+destination).
	spanStart = regexp.MustCompile(`telemetry\.Start(?:Linked|Root)?\((?:[^"\n]|"")*"([^"]+)"`)
	// spanAttr finds the span attribute keys written as literals, and attrKey the keys
	// attributes.go declares.
	spanAttr = regexp.MustCompile(`attribute\.(?:String|Int|Int64|Bool|Float64)\("([a-z_.]+)"`)
	attrKey  = regexp.MustCompile(`= attribute\.Key\("([a-z_.]+)"\)`)
	// logKey finds the constants of shared/logctx's attribute keys.
	logKey = regexp.MustCompile(`(?m)^\s+[A-Z][A-Za-z]+\s+= "([a-zA-Z_]+)"`)
	// docSpan finds a span name in the first column of the Spans table.
	docSpan = regexp.MustCompile("(?m)^\\| `([^`]+)`")
)

// section returns the text of docs/operations.md under heading (up to the next heading
// of the same or a higher level).
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("docs/operations.md has no %q", heading)
	}
	rest := doc[i+len(heading)+2:]
	level := strings.Count(strings.Fields(heading)[0], "#")
	for _, l := range []string{"\n# ", "\n## ", "\n### "}[:level] {
		if j := strings.Index(rest, l); j >= 0 {
			rest = rest[:j]
		}
	}
	return rest
}

// docs/operations.md lists every span the code starts, and starts no span it does not list;
// every span attribute the code writes is named in its Spans section; every log field of
// shared/logctx is named in its Log fields section. A span, attribute or field added without
// its line in the documentation fails here (the metrics are pinned by
// TestMetricNamesUnitsAndLabels).
func TestOperationsDocListsEverySpanAttributeAndLogField(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	spansDoc, logsDoc := section(t, doc, "### Spans"), section(t, doc, "### Log fields")

	code := map[string]bool{} // span names the code starts ("publish " for "publish {destination}")
	attrs := map[string]bool{}
	err = filepath.WalkDir(filepath.Join(repoRoot, "shared"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "otlptest") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range spanStart.FindAllStringSubmatch(string(src), -1) {
			code[m[1]] = true
		}
		for _, m := range spanAttr.FindAllStringSubmatch(string(src), -1) {
			attrs[m[1]] = true
		}
		if filepath.Base(path) == "attributes.go" && filepath.Base(filepath.Dir(path)) == "telemetry" {
			for _, m := range attrKey.FindAllStringSubmatch(string(src), -1) {
				attrs[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(code) < 10 || len(attrs) < 20 {
		t.Fatalf("found %d span names and %d attributes in the code: the patterns no longer match it", len(code), len(attrs))
	}

	listed := map[string]bool{} // the table's names, cut before a {placeholder}
	for _, m := range docSpan.FindAllStringSubmatch(spansDoc, -1) {
		name, _, _ := strings.Cut(m[1], "{")
		if name == "" || strings.HasPrefix(m[1], "{") {
			continue // {METHOD} {route} and {FunctionName}: named by otelhttp and the host
		}
		listed[name] = true
	}
	var missing, extra []string
	for name := range code {
		if !listed[name] {
			missing = append(missing, name)
		}
	}
	for name := range listed {
		if !code[name] {
			extra = append(extra, name)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("docs/operations.md#spans: spans started but not listed %q; listed but never started %q", missing, extra)
	}
	for a := range attrs {
		if !strings.Contains(spansDoc, "`"+a+"`") {
			t.Errorf("docs/operations.md#spans does not name the span attribute %q", a)
		}
	}

	src, err := os.ReadFile(filepath.Join(repoRoot, "shared", "logctx", "logctx.go"))
	if err != nil {
		t.Fatal(err)
	}
	fields := logKey.FindAllStringSubmatch(string(src), -1)
	if len(fields) < 9 {
		t.Fatalf("found %d logctx keys: the pattern no longer matches logctx.go", len(fields))
	}
	for _, m := range fields {
		if !strings.Contains(logsDoc, "`"+m[1]+"`") {
			t.Errorf("docs/operations.md#log-fields does not name the log field %q", m[1])
		}
	}
}
