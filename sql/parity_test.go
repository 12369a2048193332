// Package sql_test holds the dialect parity test (docs/conventions.md#sql-per-dialect: SQL as files, per dialect, same
// names). sql/sqlstore calls queries by name with sql.Named parameters and scans results by
// position, so every dialect must define the same query names, take the same @Name
// parameters and return the same columns in the same order, and number its migrations the
// same way.
package sql_test

import (
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/automation-platform/automation/sql/mssql"
	"github.com/automation-platform/automation/sql/sqlite"
	"github.com/automation-platform/automation/sql/sqlstore"
)

type dialect struct {
	name       string
	queries    fs.FS
	migrations fs.FS
}

// The reference dialect first; every other one is compared with it.
var dialects = []dialect{
	{"sqlite", sqlite.QueryFiles(), sqlite.Migrations()},
	{"mssql", mssql.QueryFiles(), mssql.Migrations()},
}

func load(t *testing.T, d dialect) *sqlstore.Queries {
	t.Helper()
	q, err := sqlstore.LoadQueries(d.queries)
	if err != nil {
		t.Fatalf("%s queries: %v", d.name, err)
	}
	return q
}

func sortedNames(q *sqlstore.Queries) []string {
	n := q.Names()
	sort.Strings(n)
	return n
}

// diff returns the elements of a missing from b.
func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func TestQueryNamesMatch(t *testing.T) {
	t.Parallel()
	ref := sortedNames(load(t, dialects[0]))
	for _, d := range dialects[1:] {
		got := sortedNames(load(t, d))
		if m := diff(ref, got); len(m) > 0 {
			t.Errorf("%s lacks queries defined in %s: %v", d.name, dialects[0].name, m)
		}
		if m := diff(got, ref); len(m) > 0 {
			t.Errorf("%s defines queries missing from %s: %v", d.name, dialects[0].name, m)
		}
	}
}

func TestMigrationFilesMatch(t *testing.T) {
	t.Parallel()
	list := func(d dialect) []string {
		files, err := fs.Glob(d.migrations, "*.sql")
		if err != nil {
			t.Fatalf("%s migrations: %v", d.name, err)
		}
		if len(files) == 0 {
			t.Fatalf("%s has no migrations", d.name)
		}
		sort.Strings(files)
		return files
	}
	ref := list(dialects[0])
	for _, d := range dialects[1:] {
		got := list(d)
		if !slices.Equal(ref, got) {
			t.Errorf("migration files differ: %s %v, %s %v", dialects[0].name, ref, d.name, got)
		}
	}
}

func TestQueryParametersMatch(t *testing.T) {
	t.Parallel()
	forEachSharedQuery(t, func(d dialect, name, refSQL, sqlText string) {
		want, got := params(refSQL), params(sqlText)
		if !slices.Equal(want, got) {
			t.Errorf("%s: parameters differ: %s %v, %s %v", name, dialects[0].name, want, d.name, got)
		}
	})
}

// forEachSharedQuery calls f with each query that the reference dialect and another dialect
// d both define, and its text in each (a query only one defines is TestQueryNamesMatch's).
func forEachSharedQuery(t *testing.T, f func(d dialect, name, refSQL, sqlText string)) {
	t.Helper()
	ref := load(t, dialects[0])
	for _, d := range dialects[1:] {
		q := load(t, d)
		for _, name := range sortedNames(ref) {
			if slices.Contains(q.Names(), name) {
				f(d, name, ref.SQL(name), q.SQL(name))
			}
		}
	}
}

// TestResultColumnsMatch compares what sqlstore scans by position: the RETURNING list
// (SQLite) with the OUTPUT inserted.* list (SQL Server), and the select lists of plain
// SELECT queries.
func TestResultColumnsMatch(t *testing.T) {
	t.Parallel()
	forEachSharedQuery(t, func(d dialect, name, refSQL, sqlText string) {
		want, wantKind := resultColumns(refSQL)
		got, gotKind := resultColumns(sqlText)
		switch {
		case wantKind == "" && gotKind == "":
			// no result set, or a statement shape this check does not compare
		case (wantKind == "select") != (gotKind == "select"):
			t.Errorf("%s: %s returns rows by %q, %s by %q", name, dialects[0].name, wantKind, d.name, gotKind)
		case !slices.Equal(want, got):
			t.Errorf("%s: result columns differ:\n  %s: %v\n  %s: %v", name, dialects[0].name, want, d.name, got)
		}
	})
}

func TestParameterExtraction(t *testing.T) {
	t.Parallel()
	got := params("-- uses @Commented\nSELECT 1 FROM T WHERE A = @A AND B = '@NotAParam' AND C=@C2;\nIF @@ROWCOUNT = 0 UPDATE T SET A = @A")
	if want := []string{"A", "C2"}; !slices.Equal(got, want) {
		t.Fatalf("params = %v, want %v", got, want)
	}
	got = params("UPDATE o SET P = v.n FROM dbo.O AS o JOIN OPENJSON(@Rows) WITH (i bigint '$.Id', n datetime2(3) '$.Now') AS v ON o.Id = v.i")
	if want := []string{"Id", "Now"}; !slices.Equal(got, want) {
		t.Fatalf("rows parameter members = %v, want %v", got, want)
	}
}

var (
	lineComment = regexp.MustCompile(`--[^\n]*`)
	stringLit   = regexp.MustCompile(`N?'(?:[^']|'')*'`)
	// A parameter is @Name not preceded by @ or a word character (so @@ROWCOUNT and
	// e-mail-like text are not parameters).
	paramRef = regexp.MustCompile(`(?:^|[^@\w])@([A-Za-z_][A-Za-z0-9_]*)`)
	spaces   = regexp.MustCompile(`\s+`)
)

// code strips comments and string literals.
func code(sqlText string) string {
	return stringLit.ReplaceAllString(lineComment.ReplaceAllString(sqlText, " "), "''")
}

// rowsMember is a row member of a rows parameter query (sqlstore.Dialect.EncodeRows): the
// '$.Name' path of OPENJSON(@Rows) WITH (…), which carries what a row tuple's @Name would.
var rowsMember = regexp.MustCompile(`'\$\.([A-Za-z_][A-Za-z0-9_]*)'`)

// params returns the sorted, distinct @Name parameters of a query; for a rows parameter query
// (one @Rows read by OPENJSON), its row members, which the other dialect binds one by one.
func params(sqlText string) []string {
	var out []string
	if c := lineComment.ReplaceAllString(sqlText, " "); strings.Contains(c, "OPENJSON(@Rows)") {
		for _, m := range rowsMember.FindAllStringSubmatch(c, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
		sqlText = strings.ReplaceAll(c, "@Rows", "")
	}
	for _, m := range paramRef.FindAllStringSubmatch(code(sqlText), -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

var (
	returningList = regexp.MustCompile(`(?is)\bRETURNING\b(.*?)(?:;|$)`)
	outputList    = regexp.MustCompile(`(?is)\bOUTPUT\b(.*?)\b(?:VALUES|WHERE|FROM|SELECT|INTO)\b`)
	selectList    = regexp.MustCompile(`(?is)^\s*SELECT\s+(?:TOP\s*\(\s*@\w+\s*\)\s+)?(.*?)\bFROM\b`)
)

// resultColumns returns the normalised result column list of a query and how it returns
// rows ("select" for RETURNING/OUTPUT row sets and SELECT lists), or "" when it has none
// this check compares.
func resultColumns(sqlText string) ([]string, string) {
	c := code(sqlText)
	var list string
	switch {
	case returningList.MatchString(c):
		list = returningList.FindStringSubmatch(c)[1]
	case outputList.MatchString(c):
		list = outputList.FindStringSubmatch(c)[1]
	case selectList.MatchString(c):
		list = selectList.FindStringSubmatch(c)[1]
	default:
		return nil, ""
	}
	var cols []string
	depth, start := 0, 0
	flush := func(end int) {
		col := strings.TrimSpace(spaces.ReplaceAllString(list[start:end], " "))
		if len(col) > len("inserted.") && strings.EqualFold(col[:len("inserted.")], "inserted.") {
			col = col[len("inserted."):]
		}
		cols = append(cols, col)
	}
	for i, r := range list {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				flush(i)
				start = i + 1
			}
		}
	}
	flush(len(list))
	return cols, "select"
}
