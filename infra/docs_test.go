package infra_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// codeSpans returns the fenced blocks and inline code spans of a Markdown text: where the
// commands and paths a reader copies are.
func codeSpans(md string) []string {
	var out []string
	parts := strings.Split(md, "```")
	for i, p := range parts {
		if i%2 == 1 { // inside a fence
			out = append(out, p)
			continue
		}
		for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(p, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// builtArtifacts lists what the build writes: `-o <path>` in the Makefile and the package
// script's output zip and staging folder.
func builtArtifacts(t *testing.T) (targets map[string]bool, artifacts []string) {
	t.Helper()
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	targets = map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-zA-Z0-9_/.-]+):`).FindAllStringSubmatch(string(mk), -1) {
		targets[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`-o\s+(\S+)`).FindAllStringSubmatch(string(mk), -1) {
		artifacts = append(artifacts, m[1])
	}
	sh, err := os.ReadFile("scripts/package.sh")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`out="\$\{1:-\$root/([^}"]+)\}"`).FindStringSubmatch(string(sh)); m != nil {
		artifacts = append(artifacts, m[1])
	} else {
		t.Fatal("package.sh: default output not found")
	}
	if m := regexp.MustCompile(`stage="\$root/([^"]+)"`).FindStringSubmatch(string(sh)); m != nil {
		artifacts = append(artifacts, m[1], m[1]+"/")
	} else {
		t.Fatal("package.sh: staging folder not found")
	}
	if !strings.Contains(string(mk), "bash infra/scripts/package.sh") {
		t.Fatal("make package no longer runs infra/scripts/package.sh")
	}
	return targets, artifacts
}

// The commands in infra/README.md and docs/deploy.md name make targets that exist and
// build outputs (bin/…, dist/…) that the Makefile or the package script writes: a reader who
// copies them gets the file they name (infra/README.md once named bin/functionapp.zip,
// which nothing writes).
func TestDeployDocsNameBuildOutputs(t *testing.T) {
	t.Parallel()
	targets, artifacts := builtArtifacts(t)
	if !slices.Contains(artifacts, "dist/functionapp.zip") || !slices.Contains(artifacts, "bin/automation") {
		t.Fatalf("build outputs read: %v", artifacts)
	}
	makeRE := regexp.MustCompile(`(?:^|[\s;(&|])make\s+([a-zA-Z0-9_/.-]+)`)
	pathRE := regexp.MustCompile(`(?:^|[\s'"=(:])((?:\./)?(?:dist|bin)/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]*)*)`)
	for _, doc := range []string{"README.md", "../docs/deploy.md"} {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		makes, paths := 0, 0
		for _, span := range codeSpans(string(raw)) {
			for _, m := range makeRE.FindAllStringSubmatch(span, -1) {
				makes++
				if !targets[m[1]] {
					t.Errorf("%s: `make %s`: no such target in the Makefile", doc, m[1])
				}
			}
			for _, m := range pathRE.FindAllStringSubmatch(span, -1) {
				paths++
				p := strings.TrimPrefix(m[1], "./")
				if !slices.Contains(artifacts, p) {
					t.Errorf("%s: %q is not written by the build (it writes %v)", doc, p, artifacts)
				}
			}
		}
		if makes < 2 || paths < 3 {
			t.Errorf("%s: only %d make commands and %d build paths found: the reader is not reading", doc, makes, paths)
		}
	}
}

func TestCodeSpans(t *testing.T) {
	t.Parallel()
	got := codeSpans("a `make x` b\n```sh\nmake y --src bin/z\n```\nc `dist/q`")
	if !slices.Equal(got, []string{"make x", "sh\nmake y --src bin/z\n", "dist/q"}) {
		t.Fatalf("%q", got)
	}
}
