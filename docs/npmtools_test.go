package docs_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// npmToolNames are the names the docs give package.json's devDependencies; a tool added
// there without a name here fails TestNpmToolsNamedWhereInstalled, which asks for one.
var npmToolNames = map[string]string{
	"@redocly/cli":       "Redocly CLI",
	"axe-core":           "axe-core",
	"azurite":            "Azurite",
	"oidc-provider":      "oidc-provider",
	"openapi-typescript": "openapi-typescript",
	"typescript":         "TypeScript",
}

// TestNpmToolsNamedWhereInstalled holds the three places that tell a newcomer what `make test`'s
// `npm ci` installs (the README's first step, docs/testing.md's opening, the Makefile's line
// printed before it) to package.json: each names every devDependency. They had drifted apart,
// each missing one or two of the six.
func TestNpmToolsNamedWhereInstalled(t *testing.T) {
	t.Parallel()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal([]byte(read("package.json")), &pkg); err != nil || len(pkg.DevDependencies) < 5 {
		t.Fatalf("package.json: %d devDependencies, %v", len(pkg.DevDependencies), err)
	}
	readme := read("README.md")
	step := regexp.MustCompile("(?s)1\\. `npm ci`:.*?\n2\\. ").FindString(readme)
	testing_ := read("docs/testing.md")
	opening, _, _ := strings.Cut(strings.TrimPrefix(testing_, "# Tests and benchmarks\n\n"), "\n\n")
	makeLine := regexp.MustCompile(`(?m)^.*echo "make: npm ci.*$`).FindString(read("Makefile"))
	places := map[string]string{"README.md's make test step 1": step, "docs/testing.md's opening": opening, "the Makefile's npm ci line": makeLine}
	for place, text := range places {
		if text == "" {
			t.Fatalf("%s not found", place)
		}
		text = strings.Join(strings.Fields(text), " ")
		for dep := range pkg.DevDependencies {
			name, ok := npmToolNames[dep]
			if !ok {
				t.Fatalf("package.json's devDependency %q has no name in npmToolNames: add it, and name it in the three places", dep)
			}
			if !strings.Contains(text, name) {
				t.Errorf("%s does not name %s (package.json's %q): %q", place, name, dep, text)
			}
		}
	}
}
