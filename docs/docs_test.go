// Package docs_test checks that the repository stands alone: every reference to a design
// document points at a file under docs/ that exists, and at a heading that exists in it, and
// nothing cites a design file kept outside the repository (docs/conventions.md#tests).
package docs_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// A problem is one reference that does not resolve, or one citation of a file outside the
// repository, at a 1-based line of a repository-relative path.
type problem struct {
	file string
	line int
	msg  string
}

func (p problem) String() string { return fmt.Sprintf("%s:%d: %s", p.file, p.line, p.msg) }

// forbidden are citations of design files that live outside the repository. They are built
// from pieces so this file does not trip over itself.
var forbidden = []string{
	"\u00a7", // the section sign: a numbered section of the old design document kept outside the repository
	"ARCHITECTURE" + ".md",
	"shared" + "/design",
	"shared" + "/seeds",
	"../" + "shared",
	"/work" + "/shared",
	"STYLE" + ".md",
	"FUNCTIONS-" + "PROTOCOL",
	"ANCHORS" + ".md",
}

// allowedOutside are the exact spellings that may mention a path beside the repository: the
// DST oracle test runs the team's oracle script when it is present (docs/architecture.md#dst-oracle),
// and make bench runs the peer benchmarks beside the repository when they are present
// (docs/performance.md#make-bench).
var allowedOutside = []string{"../" + "shared/tools/tzoracle.py", "../" + "shared/bench"}

var (
	// docRef finds docs/<file>.md[#anchor] anywhere in a text (not as part of a longer path).
	docRef = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])(docs/[A-Za-z0-9_-]+\.md)(#[A-Za-z0-9_-]*)?`)
	// mdLink finds the target of a Markdown inline link.
	mdLink    = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	heading   = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlID    = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	linkText  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	fenceLine = regexp.MustCompile("^ {0,3}(```|~~~)")
	// quotedRef finds a reference to a section by its heading's words, docs/<file>.md, "Heading"
	// (the words may run on over a comment's next lines).
	quotedRef = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])(docs/[A-Za-z0-9_-]+\.md), "([^"]{1,300})"`)
	// commentBreak is a line break inside a comment, with the next line's comment marker.
	commentBreak = regexp.MustCompile(`\s*\n\s*(?://|--|#)?\s*`)
)

// slug is GitHub's heading anchor: the heading's text (inline links reduced to their text)
// lower-cased, every character that is not a letter, digit, space, hyphen or underscore
// dropped, spaces turned into hyphens.
func slug(h string) string {
	h = linkText.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// anchors returns the anchors a Markdown document defines: one per heading outside fenced
// code (repeated headings get -1, -2, … as on GitHub) and explicit <a id> / <a name> tags.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, ln := range strings.Split(md, "\n") {
		if fenceLine.MatchString(ln) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlID.FindAllStringSubmatch(ln, -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(ln)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// check reads files (slash-separated, relative to root) and returns every problem: a docs/
// reference to a missing file or heading, a relative Markdown link under docs/ that does not
// resolve, and any forbidden citation. Binary files are skipped.
func check(root string, files []string) ([]problem, error) {
	texts := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // listed by git but deleted in the working tree
			}
			return nil, err
		}
		if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
			continue
		}
		texts[f] = string(b)
	}
	anchorCache := map[string]map[string]bool{}
	target := func(file string) (map[string]bool, bool) {
		if a, ok := anchorCache[file]; ok {
			return a, true
		}
		text, ok := texts[file]
		if !ok {
			return nil, false
		}
		anchorCache[file] = anchors(text)
		return anchorCache[file], true
	}
	resolve := func(file, anchor string) string {
		a, ok := target(file)
		switch {
		case !ok:
			return fmt.Sprintf("%s does not exist", file)
		case anchor != "" && !a[anchor]:
			return fmt.Sprintf("%s has no heading with anchor #%s", file, anchor)
		}
		return ""
	}
	// resolveQuoted: a quoted heading must be a heading of file, or the start of one (a
	// reference may shorten a long heading).
	resolveQuoted := func(file, words string) string {
		a, ok := target(file)
		if !ok {
			return fmt.Sprintf("%s does not exist", file)
		}
		want := slug(commentBreak.ReplaceAllString(words, " "))
		for anchor := range a {
			if strings.HasPrefix(anchor, want) {
				return ""
			}
		}
		return fmt.Sprintf("%s has no heading starting with those words", file)
	}
	var out []problem
	names := make([]string, 0, len(texts))
	for f := range texts {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		for _, m := range quotedRef.FindAllStringSubmatchIndex(texts[f], -1) {
			file, words := texts[f][m[2]:m[3]], texts[f][m[4]:m[5]]
			if msg := resolveQuoted(file, words); msg != "" {
				words = commentBreak.ReplaceAllString(words, " ")
				out = append(out, problem{f, strings.Count(texts[f][:m[2]], "\n") + 1, "reference " + file + ", \"" + words + "\": " + msg})
			}
		}
		isDoc := strings.HasPrefix(f, "docs/") && strings.HasSuffix(f, ".md")
		for i, ln := range strings.Split(texts[f], "\n") {
			at := func(msg string) { out = append(out, problem{f, i + 1, msg}) }
			for _, m := range docRef.FindAllStringSubmatch(ln, -1) {
				if msg := resolve(m[1], strings.TrimPrefix(m[2], "#")); msg != "" {
					at("reference " + m[1] + m[2] + ": " + msg)
				}
			}
			if isDoc {
				for _, m := range mdLink.FindAllStringSubmatch(ln, -1) {
					t := m[1]
					if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") {
						continue
					}
					file, anchor, _ := strings.Cut(t, "#")
					if file == "" {
						file = f
					} else {
						file = path.Join(path.Dir(f), file)
					}
					if !strings.HasSuffix(file, ".md") {
						anchor = "" // a link to a folder or a non-Markdown file: it must exist
						if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(file))); err != nil {
							at("link " + t + ": " + file + " does not exist")
						}
						continue
					}
					if msg := resolve(file, anchor); msg != "" {
						at("link " + t + ": " + msg)
					}
				}
			}
			clean := ln
			for _, ok := range allowedOutside {
				clean = strings.ReplaceAll(clean, ok, "")
			}
			for _, bad := range forbidden {
				if strings.Contains(clean, bad) {
					at(fmt.Sprintf("cites %q, a design file outside the repository: point at docs/ instead", bad))
				}
			}
		}
	}
	return out, nil
}

// repoRoot is the repository's root (the folder above docs/, holding go.mod), absolute; a
// root without go.mod fails t.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	return root
}

// repoFiles lists the repository's files: tracked and untracked-but-not-ignored ones from
// git, or, without git, a walk that skips .git and node_modules.
func repoFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" && !strings.HasPrefix(f, "node_modules/") {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRepositoryStandsAlone checks the whole repository.
func TestRepositoryStandsAlone(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	files := repoFiles(t, root)
	if !slices.Contains(files, "docs/architecture.md") || len(files) < 100 {
		t.Fatalf("listed %d files, without docs/architecture.md: the file listing is broken", len(files))
	}
	problems, err := check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	// The references this test exists for are really there (a regexp that matches nothing
	// would pass every repository).
	refs := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".go") {
			b, _ := os.ReadFile(filepath.Join(root, f))
			refs += len(docRef.FindAll(b, -1))
		}
	}
	if refs < 100 {
		t.Errorf("only %d docs/ references found in Go files; expected the code to cite the design", refs)
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"Claim", "claim"},
		{"Failure, backoff and rescue", "failure-backoff-and-rescue"},
		{"DST product rule", "dst-product-rule"},
		{"Idempotency-Key", "idempotency-key"},
		{"ETag and If-Match", "etag-and-if-match"},
		{"Seed 000", "seed-000"},
		{"The `replay` scenario", "the-replay-scenario"},
		{"See [the row](architecture.md#the-row)", "see-the-row"},
		{"Seed 000 — the core", "seed-000--the-core"},
		{"snake_case stays", "snake_case-stays"},
	} {
		if got := slug(c.in); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCheckFindsBrokenReferences runs the checker on a small repository with one reference of
// every broken kind next to good ones: each broken one is reported, no good one is.
func TestCheckFindsBrokenReferences(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	d := "docs" // built from pieces: the references below must not be checked as this repository's
	write := func(name, text string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(d+"/guide.md", "# Guide\n\n## Claim\n\n## Claim\n\n```\n## Not a heading\n```\n<a id=\"custom\"></a>\n"+
		"See [claim](#claim), [other](other.md#top), [up](../README.md), [gone](missing.md), [bad](#nowhere), [web](https://example.com/x.md#y).\n")
	write(d+"/other.md", "# Top\n\n## The other page\n")
	write("README.md", "# Readme\n")
	write("pkg/good.go", "// ok: "+d+"/guide.md#claim, "+d+"/guide.md#claim-1, "+d+"/guide.md#custom, "+d+"/other.md, ("+d+"/guide.md).\n"+
		"// not ours: shared/"+d+"/guide.md#nowhere\n"+
		"// quoted: ("+d+"/guide.md, \"Claim\"), ("+d+"/other.md, \"The other\n// page\")\n")
	write("pkg/bad.go", "// a: "+d+"/guide.md#not-a-heading\n// b: "+d+"/nothing.md#claim\n// c: see \u00a73.4\n"+
		"// d: ARCHITECTURE"+".md\n// e: ../"+"shared/"+"seeds/000.txt\n// f: shared"+"/design/x\n"+
		"// g: ("+d+"/guide.md, \"Claim and\n// more\"), ("+d+"/nothing.md, \"Top\")\n")
	write("pkg/oracle.go", `const oracle = "../../../`+`shared/tools/tzoracle.py"`+"\n")
	write("pkg/data.bin", "\x00\u00a7 binary")
	files := []string{d + "/guide.md", d + "/other.md", "README.md", "pkg/good.go", "pkg/bad.go", "pkg/oracle.go", "pkg/data.bin"}

	problems, err := check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		d + "/guide.md:11: link missing.md: " + d + "/missing.md does not exist",
		d + "/guide.md:11: link #nowhere: " + d + "/guide.md has no heading with anchor #nowhere",
		"pkg/bad.go:1: reference " + d + "/guide.md#not-a-heading: " + d + "/guide.md has no heading with anchor #not-a-heading",
		"pkg/bad.go:2: reference " + d + "/nothing.md#claim: " + d + "/nothing.md does not exist",
		"pkg/bad.go:3: cites \"\u00a7\", a design file outside the repository: point at docs/ instead",
		"pkg/bad.go:4: cites \"ARCHITECTURE" + ".md\", a design file outside the repository: point at docs/ instead",
		"pkg/bad.go:5: cites \"shared" + "/seeds\", a design file outside the repository: point at docs/ instead",
		"pkg/bad.go:5: cites \"../" + "shared\", a design file outside the repository: point at docs/ instead",
		"pkg/bad.go:6: cites \"shared" + "/design\", a design file outside the repository: point at docs/ instead",
		"pkg/bad.go:7: reference " + d + "/guide.md, \"Claim and more\": " + d + "/guide.md has no heading starting with those words",
		"pkg/bad.go:8: reference " + d + "/nothing.md, \"Top\": " + d + "/nothing.md does not exist",
		"pkg/bad.go:8: reference " + d + "/nothing.md: " + d + "/nothing.md does not exist",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
