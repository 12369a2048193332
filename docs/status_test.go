package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// staleStatus matches the words that say a feature does not exist yet. The docs describe
// what is built; when a word like these sits next to a feature that exists, the reader is
// told the product lacks it (issue 33: docs/seeds.md called the gateway "planned" long after
// it shipped). Built from pieces so this file does not trip over itself.
var staleStatus = regexp.MustCompile(`(?i)\b(` + "plan" + `ned|being ` + "built" + `|not ` + "built" + ` yet)\b`)

// staleAllowed are the explicit exceptions: a Markdown file and a phrase of the line, with why
// the word is true there (the feature really does not exist, or the word means something
// else). Add one only with its reason.
var staleAllowed = []struct{ file, phrase, why string }{}

// staleProblems returns one problem per line of a Markdown text that uses a stale-status word
// outside the allow-list.
func staleProblems(file string, text []byte) []problem {
	var out []problem
	for i, line := range strings.Split(string(text), "\n") {
		if !staleStatus.MatchString(line) {
			continue
		}
		allowed := false
		for _, a := range staleAllowed {
			allowed = allowed || a.file == file && strings.Contains(line, a.phrase)
		}
		if !allowed {
			out = append(out, problem{file: file, line: i + 1, msg: "says " + strings.ToLower(staleStatus.FindString(line)) +
				": describe what is built, or add an entry to staleAllowed saying why the word is true"})
		}
	}
	return out
}

// TestDocsCallNothingPlannedThatExists: no Markdown file of the repository (README.md, docs/,
// every other .md) says "planned", "being built" or "not built yet", in any case, unless
// staleAllowed names the line and says why.
func TestDocsCallNothingPlannedThatExists(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	files := repoFiles(t, root)
	n := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		n++
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range staleProblems(f, b) {
			t.Error(p)
		}
	}
	if n < 15 {
		t.Fatalf("only %d Markdown files listed: the file listing is broken", n)
	}
	for _, a := range staleAllowed {
		if a.why == "" {
			t.Errorf("allow-list entry %s %q has no reason", a.file, a.phrase)
		}
	}
}

// The check itself finds each word in any case, and only those.
func TestStaleStatusCheckFindsTheWords(t *testing.T) {
	t.Parallel()
	text := "The gateway is Planned.\nThe worker is BEING BUILT.\nRendering is not built yet.\nThe planner plans nothing.\nIt was built."
	got := staleProblems("sample.md", []byte(text))
	var lines []int
	for _, p := range got {
		lines = append(lines, p.line)
	}
	if len(lines) != 3 || lines[0] != 1 || lines[1] != 2 || lines[2] != 3 {
		t.Fatalf("problems at lines %v, want 1, 2 and 3: %v", lines, got)
	}
}
