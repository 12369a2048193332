package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryBenchmarkReportsReadableUnits: every Benchmark function in the repository reports
// at least one figure a person reads without arithmetic - a rate (".../s") or a latency
// (p50/p99, µs or ms per item) - through b.ReportMetric, so its own `go test -bench` output
// is not raw ns/op only (make bench's table reads the same metrics).
func TestEveryBenchmarkReportsReadableUnits(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Benchmark") || fn.Body == nil {
				continue
			}
			seen++
			var units []string
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 2 {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "ReportMetric" {
					if lit, ok := call.Args[1].(*ast.BasicLit); ok {
						u, _ := strconv.Unquote(lit.Value)
						units = append(units, u)
					}
				}
				return true
			})
			if !readable(units) {
				t.Errorf("%s: %s reports %q: add a rate (…/s) or a latency (p50/p99, µs or ms per item) with b.ReportMetric", path, fn.Name.Name, units)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no benchmarks found: the walk is broken")
	}
}

func readable(units []string) bool {
	for _, u := range units {
		if strings.HasSuffix(u, "/s") || strings.HasPrefix(u, "p50") || strings.HasPrefix(u, "p99") ||
			strings.HasPrefix(u, "µs/") || strings.HasPrefix(u, "ms/") {
			return true
		}
	}
	return false
}
