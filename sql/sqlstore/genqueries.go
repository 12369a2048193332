//go:build ignore

// genqueries writes the query file of a query template (go generate in sql/sqlite and
// sql/mssql): go run ../sqlstore/genqueries.go queries/support_find.sql.tmpl
// writes queries/support_find.sql. The expansion is sqlstore.GenerateQueries.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/automation-platform/automation/sql/sqlstore"
)

func main() {
	if len(os.Args) != 2 || !strings.HasSuffix(os.Args[1], ".sql.tmpl") {
		fmt.Fprintln(os.Stderr, "usage: go run genqueries.go queries/<name>.sql.tmpl")
		os.Exit(2)
	}
	in := os.Args[1]
	tmpl, err := os.ReadFile(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := sqlstore.GenerateQueries(in, tmpl)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(strings.TrimSuffix(in, ".tmpl"), out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
