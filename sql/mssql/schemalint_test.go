package mssql_test

// The schema lint: it replays every SQL Server migration in order on a model of the schema
// (tables, column types, indexes and key constraints; ALTER TABLE ADD / ALTER COLUMN /
// DROP COLUMN / DROP CONSTRAINT, CREATE and DROP INDEX, sp_rename, DROP TABLE, and the
// statements of dynamic SQL, EXEC (N'…')) and checks what SQL Server only checks when a row
// arrives:
//
//   - key width (docs/conventions.md#sql-server-key-widths): the worst-case bytes of every
//     primary key, unique constraint and index key must fit SQL Server's limits, 900 bytes
//     for a clustered key and 1,700 for a nonclustered one (SQL Server 2016 and later, Azure
//     SQL). Variable-length columns count at their declared maximum (nvarchar/nchar 2 bytes
//     a character, varchar/char/varbinary/binary 1); INCLUDE columns do not count. A
//     nonunique nonclustered index also carries the clustered key's columns in its key (and
//     the 4-byte uniquifier of a nonunique clustered index), so they count too. A key past
//     the limit is created with only warning 1945; the insert of a row whose key is too wide
//     fails with error 1946.
//   - seeks on strings: a char/varchar column compared with a query parameter is converted
//     to nvarchar (go-mssqldb sends every Go string as nvarchar, which has the higher data
//     type precedence), so the comparison cannot seek an index on it under a SQL collation.
//     Keys that queries compare are nvarchar/nchar with the Latin1_General_100_BIN2
//     collation (see 0001_initial.sql).
//   - collation (collation_lint_test.go, docs/conventions.md#sql-server-collation): every
//     string column that is an index key column or that a query compares has a _BIN2
//     collation, unless collationAllowed names it with a reason.
//   - ALTER COLUMN and DROP COLUMN of a column that an index (key, INCLUDE or filter), a
//     CHECK, FOREIGN KEY or DEFAULT constraint or a computed column uses is an error, as SQL
//     Server refuses it (error 5074, then 4922; for a DEFAULT the lint is stricter than the
//     server, see dependents): a migration drops them first and recreates them after.

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/sql/mssql"
)

// Key width limits of SQL Server 2016+ and Azure SQL (Maximum capacity specifications:
// "Bytes per index key").
const (
	maxClusteredKey    = 900
	maxNonclusteredKey = 1700
)

type lintColumn struct {
	name     string
	typ      string // lower case base type: nvarchar, int, datetime2, …
	length   int    // characters or bytes as declared; -1 for (max)
	computed string // the expression of a computed column
	// collation is the COLLATE clause as written ("" when the column takes the database
	// default, SQL_Latin1_General_CP1_CI_AS in infra/); null is "NULL", "NOT NULL" or "".
	collation string
	null      string
}

// lintConstraint is a CHECK, FOREIGN KEY or DEFAULT constraint: ALTER COLUMN of a column it
// reads fails while it exists.
type lintConstraint struct {
	name   string
	kind   string   // CHECK, FOREIGN KEY or DEFAULT
	cols   []string // the columns of its own table it reads, lower case
	origin string
}

// width is the most bytes the column takes in an index key, or an error for a type that
// cannot be a key column.
func (c *lintColumn) width(t *lintTable) (int, error) {
	if c.computed != "" {
		// A computed column is as wide as the widest column it reads (the columns this
		// schema computes from are of one type: 0008's WakeUpOn is a datetime2 CASE).
		w := 0
		for _, other := range t.order {
			if other != strings.ToLower(c.name) && wordIn(c.computed, other) {
				ow, err := t.cols[other].width(t)
				if err != nil {
					return 0, err
				}
				w = max(w, ow)
			}
		}
		if w == 0 {
			return 0, fmt.Errorf("computed column %s: cannot infer its width from %q", c.name, c.computed)
		}
		return w, nil
	}
	switch c.typ {
	case "nvarchar", "nchar":
		if c.length < 0 {
			return 0, fmt.Errorf("column %s is %s(max), invalid as a key column (error 1919)", c.name, c.typ)
		}
		return 2 * c.length, nil
	case "varchar", "char", "varbinary", "binary":
		if c.length < 0 {
			return 0, fmt.Errorf("column %s is %s(max), invalid as a key column (error 1919)", c.name, c.typ)
		}
		return c.length, nil
	case "sysname":
		return 256, nil
	case "bit", "tinyint":
		return 1, nil
	case "smallint":
		return 2, nil
	case "int", "real", "smallmoney", "smalldatetime":
		return 4, nil
	case "date":
		return 3, nil
	case "time":
		return 5, nil
	case "bigint", "float", "money", "datetime", "datetime2":
		return 8, nil // datetime2: 6 to 8 bytes by precision, counted at most
	case "datetimeoffset":
		return 10, nil
	case "uniqueidentifier":
		return 16, nil
	case "decimal", "numeric":
		return 17, nil // at most (precision 29 to 38)
	}
	return 0, fmt.Errorf("column %s: type %q unknown to the lint (add its width)", c.name, c.typ)
}

type lintIndex struct {
	name      string
	cols      []string // key columns, lower case, in order
	clustered bool
	unique    bool
	include   string // the INCLUDE list and the filter as written, normalised (describe)
	origin    string // the migration that created it
}

type lintTable struct {
	name    string
	cols    map[string]*lintColumn // by lower-case name
	order   []string
	indexes map[string]*lintIndex // by lower-case name
	// constraints are the CHECK, FOREIGN KEY and DEFAULT constraints, by lower-case name
	// (an unnamed one gets a made-up name the migrations cannot drop by).
	constraints map[string]*lintConstraint
}

func (t *lintTable) clusteredIndex() *lintIndex {
	for _, ix := range t.indexes {
		if ix.clustered {
			return ix
		}
	}
	return nil
}

type lintSchema struct {
	tables map[string]*lintTable // by lower-case name without the dbo. schema
	errs   []string              // statements the model could not apply
}

func newLintSchema() *lintSchema { return &lintSchema{tables: map[string]*lintTable{}} }

// replayed is an empty model with the migration texts (by file name) applied in file-name
// order; what it could not read is in its errs.
func replayed(migs map[string]string) *lintSchema {
	s := newLintSchema()
	for _, n := range slices.Sorted(maps.Keys(migs)) {
		s.apply(n, migs[n])
	}
	return s
}

func (s *lintSchema) fail(file, format string, args ...any) {
	s.errs = append(s.errs, file+": "+fmt.Sprintf(format, args...))
}

func (s *lintSchema) table(file, name string) *lintTable {
	t := s.tables[tableKey(name)]
	if t == nil {
		s.fail(file, "table %s is not defined", name)
	}
	return t
}

func tableKey(name string) string {
	n := strings.ToLower(strings.Trim(name, "[]"))
	n = strings.TrimPrefix(n, "dbo.")
	return strings.Trim(n, "[]")
}

func wordIn(text, word string) bool {
	return regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(word) + `\b`).MatchString(text)
}

var (
	lintLineComment = regexp.MustCompile(`--[^\n]*`)
	lintString      = regexp.MustCompile(`N?'((?:[^']|'')*)'`)
	ddlStart        = regexp.MustCompile(`(?is)^\s*(CREATE|ALTER|DROP)\b`)
	renameCall      = regexp.MustCompile(`(?is)\bEXEC(?:UTE)?\s+(?:sys\.)?sp_rename\s+(?:@objname\s*=\s*)?N?'([^']*)'\s*,\s*(?:@newname\s*=\s*)?N?'([^']*)'(?:\s*,\s*(?:@objtype\s*=\s*)?N?'([^']*)')?`)
	stmtStart       = regexp.MustCompile(`(?is)\b(CREATE\s+TABLE|ALTER\s+TABLE|DROP\s+TABLE|DROP\s+INDEX|CREATE\s+(?:UNIQUE\s+)?(?:(?:NON)?CLUSTERED\s+)?INDEX|__RENAME)\b`)
	colType         = regexp.MustCompile(`(?is)^\s*\[?(\w+)\]?\s+(\w+)\s*(?:\(\s*(max|\d+)\s*(?:,\s*\d+\s*)?\))?`)
	computedCol     = regexp.MustCompile(`(?is)^\s*\[?(\w+)\]?\s+AS\s+(.*)$`)
	keyConstraint   = regexp.MustCompile(`(?is)^\s*(?:CONSTRAINT\s+\[?(\w+)\]?\s+)?(PRIMARY\s+KEY|UNIQUE)\s*(CLUSTERED|NONCLUSTERED)?\s*\(([^)]*)\)`)
	inlineKey       = regexp.MustCompile(`(?is)(?:CONSTRAINT\s+\[?(\w+)\]?\s+)?(PRIMARY\s+KEY|UNIQUE)\s*(CLUSTERED|NONCLUSTERED)?`)
	createIndex     = regexp.MustCompile(`(?is)^CREATE\s+(UNIQUE\s+)?(?:(NONCLUSTERED|CLUSTERED)\s+)?INDEX\s+\[?(\w+)\]?\s+ON\s+([\w.\[\]]+)\s*\(([^)]*)\)`)
	dropIndex       = regexp.MustCompile(`(?is)^DROP\s+INDEX\s+(?:IF\s+EXISTS\s+)?\[?(\w+)\]?\s+ON\s+([\w.\[\]]+)`)
	dropTable       = regexp.MustCompile(`(?is)^DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?([\w.\[\]]+)`)
	createTable     = regexp.MustCompile(`(?is)^CREATE\s+TABLE\s+([\w.\[\]]+)\s*\(`)
	alterTable      = regexp.MustCompile(`(?is)^ALTER\s+TABLE\s+([\w.\[\]]+)\s+(.*)$`)
)

// flatten strips comments, replaces each string literal by ” unless it holds DDL (dynamic
// SQL run by EXEC), whose text is put in its place between statement separators, and turns
// each sp_rename call into a "__RENAME old new type" statement.
func flatten(text string) string {
	text = lintLineComment.ReplaceAllString(text, " ")
	text = renameCall.ReplaceAllStringFunc(text, func(m string) string {
		g := renameCall.FindStringSubmatch(m)
		typ := g[3]
		if typ == "" {
			typ = "OBJECT"
		}
		return "; __RENAME " + g[1] + " " + g[2] + " " + typ + " ;"
	})
	return lintString.ReplaceAllStringFunc(text, func(m string) string {
		inner := strings.ReplaceAll(lintString.FindStringSubmatch(m)[1], "''", "'")
		if ddlStart.MatchString(inner) {
			return " ; " + flatten(inner) + " ; "
		}
		return "''"
	})
}

// upSection returns the part of a goose migration between "-- +goose Up" and
// "-- +goose Down".
func upSection(text string) string {
	if _, after, ok := strings.Cut(text, "-- +goose Up"); ok {
		text = after
	}
	before, _, _ := strings.Cut(text, "-- +goose Down")
	return before
}

// splitTop splits s at commas outside parentheses.
func splitTop(s string) []string {
	var out []string
	for start := 0; ; {
		i := scanDepth(s, start, func(c byte, depth int) bool { return c == ',' && depth == 0 })
		out = append(out, s[start:i])
		if i == len(s) {
			return out
		}
		start = i + 1
	}
}

// balanced returns the text inside the parenthesis that opens at s[open] and the index
// after its closing parenthesis.
func balanced(s string, open int) (string, int) {
	i := scanDepth(s, open, func(c byte, depth int) bool { return c == ')' && depth == 1 })
	if i == len(s) {
		return s[open+1:], len(s)
	}
	return s[open+1 : i], i + 1
}

// scanDepth walks s from at, keeping the parenthesis depth (0 at at, one more after each
// '(', one less after each ')'), and returns the index of the first byte where stop (the
// byte, the depth before it) holds, or len(s) when none does.
func scanDepth(s string, at int, stop func(c byte, depth int) bool) int {
	depth := 0
	for i := at; i < len(s); i++ {
		if stop(s[i], depth) {
			return i
		}
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	return len(s)
}

// indexTail normalises what follows an index's key list (INCLUDE and WHERE; WITH options
// and the dynamic SQL's concatenations dropped).
func indexTail(rest string) string {
	rest = regexp.MustCompile(`(?is)\bWITH\s*\(.*$`).ReplaceAllString(rest, "")
	rest = regexp.MustCompile(`(?s)''\s*\+.*$`).ReplaceAllString(rest, "")
	rest = strings.NewReplacer("N''", "''", "[", "", "]", "").Replace(rest)
	return strings.ToLower(strings.Join(strings.Fields(rest), " "))
}

func keyColumns(list string) []string {
	var cols []string
	for _, c := range splitTop(list) {
		f := strings.Fields(strings.TrimSpace(c))
		if len(f) > 0 {
			cols = append(cols, strings.ToLower(strings.Trim(f[0], "[]")))
		}
	}
	return cols
}

// apply replays one migration's Up section on the model.
func (s *lintSchema) apply(file, text string) {
	flat := flatten(upSection(text))
	locs := stmtStart.FindAllStringIndex(flat, -1)
	for i, loc := range locs {
		end := len(flat)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		stmt := flat[loc[0]:end]
		if j := strings.Index(stmt, ";"); j >= 0 && !createTable.MatchString(stmt) {
			stmt = stmt[:j]
		}
		s.statement(file, strings.TrimSpace(stmt))
	}
}

func (s *lintSchema) statement(file, stmt string) {
	switch {
	case createTable.MatchString(stmt):
		m := createTable.FindStringSubmatchIndex(stmt)
		name := stmt[m[2]:m[3]]
		body, _ := balanced(stmt, m[1]-1)
		t := &lintTable{name: tableKey(name), cols: map[string]*lintColumn{}, indexes: map[string]*lintIndex{}, constraints: map[string]*lintConstraint{}}
		if s.tables[t.name] != nil {
			s.fail(file, "table %s created twice", name)
		}
		s.tables[t.name] = t
		for _, def := range splitTop(body) {
			s.definition(file, t, def)
		}
	case alterTable.MatchString(stmt):
		g := alterTable.FindStringSubmatch(stmt)
		t := s.table(file, g[1])
		if t == nil {
			return
		}
		s.alter(file, t, strings.TrimSpace(g[2]))
	case createIndex.MatchString(stmt):
		g := createIndex.FindStringSubmatch(stmt)
		t := s.table(file, g[4])
		if t == nil {
			return
		}
		ix := &lintIndex{name: g[3], cols: keyColumns(g[5]), clustered: strings.EqualFold(g[2], "CLUSTERED"), unique: g[1] != "", origin: file,
			include: indexTail(stmt[len(g[0]):])}
		if old := t.indexes[strings.ToLower(ix.name)]; old != nil && !regexp.MustCompile(`(?i)DROP_EXISTING\s*=\s*ON`).MatchString(stmt) {
			s.fail(file, "index %s on %s created twice", ix.name, t.name)
		}
		s.addIndex(file, t, ix)
	case dropIndex.MatchString(stmt):
		g := dropIndex.FindStringSubmatch(stmt)
		if t := s.table(file, g[2]); t != nil {
			s.dropIndex(file, t, g[1], regexp.MustCompile(`(?i)^DROP\s+INDEX\s+IF\s+EXISTS`).MatchString(stmt))
		}
	case dropTable.MatchString(stmt):
		delete(s.tables, tableKey(dropTable.FindStringSubmatch(stmt)[1]))
	case strings.HasPrefix(stmt, "__RENAME"):
		f := strings.Fields(stmt)
		if len(f) != 4 {
			s.fail(file, "sp_rename: cannot read %q", stmt)
			return
		}
		s.rename(file, f[1], f[2], strings.ToUpper(f[3]))
	default:
		s.fail(file, "statement not understood: %.80q", stmt)
	}
}

// definition applies one element of a CREATE TABLE body or an ALTER TABLE ADD list: a
// column (with its inline key constraint, if any) or a table constraint.
func (s *lintSchema) definition(file string, t *lintTable, def string) {
	def = strings.TrimSpace(def)
	if def == "" {
		return
	}
	if g := keyConstraint.FindStringSubmatch(def); g != nil {
		s.addIndex(file, t, keyIndex(t, g[1], g[2], g[3], keyColumns(g[4]), file))
		return
	}
	if g := otherConstraint.FindStringSubmatch(def); g != nil {
		s.addConstraint(file, t, g[1], g[2], def[len(g[0]):], "")
		return
	}
	if g := computedCol.FindStringSubmatch(def); g != nil {
		s.addColumn(file, t, &lintColumn{name: g[1], computed: g[2]})
		return
	}
	g := colType.FindStringSubmatch(def)
	if g == nil {
		s.fail(file, "%s: column definition not understood: %.80q", t.name, def)
		return
	}
	c := &lintColumn{name: g[1], typ: strings.ToLower(g[2])}
	switch {
	case strings.EqualFold(g[3], "max"):
		c.length = -1
	case g[3] != "":
		c.length, _ = strconv.Atoi(g[3])
	case c.typ == "char" || c.typ == "nchar" || c.typ == "varchar" || c.typ == "nvarchar" || c.typ == "binary" || c.typ == "varbinary":
		c.length = 1 // the declared default length
	}
	rest := def[len(g[0]):]
	if m := collateClause.FindStringSubmatch(rest); m != nil {
		c.collation = m[1]
	}
	switch {
	case notNull.MatchString(rest):
		c.null = "NOT NULL"
	case nullWord.MatchString(rest):
		c.null = "NULL"
	}
	s.addColumn(file, t, c)
	if k := inlineKey.FindStringSubmatch(rest); k != nil {
		s.addIndex(file, t, keyIndex(t, k[1], k[2], k[3], []string{strings.ToLower(c.name)}, file))
	}
	for _, m := range inlineConstraint.FindAllStringSubmatchIndex(rest, -1) {
		name, kind := "", strings.ToUpper(strings.Join(strings.Fields(rest[m[4]:m[5]]), " "))
		if m[2] >= 0 {
			name = rest[m[2]:m[3]]
		}
		if kind == "REFERENCES" {
			kind = "FOREIGN KEY"
		}
		s.addConstraint(file, t, name, kind, rest[m[1]:], strings.ToLower(c.name))
	}
}

var (
	collateClause    = regexp.MustCompile(`(?i)\bCOLLATE\s+(\w+)`)
	notNull          = regexp.MustCompile(`(?i)\bNOT\s+NULL\b`)
	nullWord         = regexp.MustCompile(`(?i)\bNULL\b`)
	otherConstraint  = regexp.MustCompile(`(?is)^(?:CONSTRAINT\s+\[?(\w+)\]?\s+)?(CHECK|FOREIGN\s+KEY|DEFAULT)\b`)
	inlineConstraint = regexp.MustCompile(`(?is)(?:\bCONSTRAINT\s+\[?(\w+)\]?\s+)?\b(CHECK|REFERENCES|DEFAULT)\b`)
	defaultFor       = regexp.MustCompile(`(?is)\bFOR\s+\[?(\w+)\]?\s*$`)
	fkColumns        = regexp.MustCompile(`(?is)^\s*\(([^)]*)\)`)
)

// addConstraint records a CHECK, FOREIGN KEY or DEFAULT constraint of t: body is the text
// after its keyword; column is the column it is declared on, "" for a table constraint
// (whose columns are read from the body: a CHECK's expression, a FOREIGN KEY's column list,
// a DEFAULT's FOR column).
func (s *lintSchema) addConstraint(file string, t *lintTable, name, kind, body, column string) {
	kind = strings.ToUpper(strings.Join(strings.Fields(kind), " "))
	var cols []string
	switch {
	case column != "":
		cols = []string{column}
		if kind == "CHECK" {
			// an inline CHECK may read other columns too
			if i := strings.Index(body, "("); i >= 0 {
				expr, _ := balanced(body, i)
				cols = appendUnique(cols, s.columnsIn(t, expr)...)
			}
		}
	case kind == "CHECK":
		if i := strings.Index(body, "("); i >= 0 {
			expr, _ := balanced(body, i)
			cols = s.columnsIn(t, expr)
		}
	case kind == "FOREIGN KEY":
		if m := fkColumns.FindStringSubmatch(body); m != nil {
			cols = keyColumns(m[1])
		}
	case kind == "DEFAULT":
		if m := defaultFor.FindStringSubmatch(body); m != nil {
			cols = []string{strings.ToLower(m[1])}
		}
	}
	if len(cols) == 0 {
		s.fail(file, "%s: %s constraint %s: cannot tell which columns it reads: %.80q", t.name, kind, name, body)
		return
	}
	if name == "" {
		name = fmt.Sprintf("(unnamed %s on %s.%s)", kind, t.name, strings.Join(cols, "_"))
	}
	k := strings.ToLower(name)
	if t.constraints[k] != nil || t.indexes[k] != nil {
		s.fail(file, "%s: constraint %s added twice", t.name, name)
	}
	t.constraints[k] = &lintConstraint{name: name, kind: kind, cols: cols, origin: file}
}

// columnsIn lists t's columns named in expr, lower case, in table order.
func (s *lintSchema) columnsIn(t *lintTable, expr string) []string {
	var out []string
	for _, k := range t.order {
		if wordIn(expr, k) {
			out = append(out, k)
		}
	}
	return out
}

func appendUnique(list []string, xs ...string) []string {
	for _, x := range xs {
		if !contains(list, x) {
			list = append(list, x)
		}
	}
	return list
}

// dependents lists what SQL Server refuses an ALTER COLUMN of t's column k for (error 5074,
// "The object … is dependent on column …", then 4922 "ALTER TABLE ALTER COLUMN … failed
// because one or more objects access this column"): every index holding it (key, INCLUDE or
// filter; a PRIMARY KEY or UNIQUE constraint is an index), every CHECK, FOREIGN KEY or
// DEFAULT constraint reading it and every computed column reading it. The DEFAULT rule is
// the conservative one: SQL Server documents that a DEFAULT allows a change of length,
// precision or scale (and, by our reading, of collation), but the lint was never checked
// against a server, so it asks for the drop and re-create a DEFAULT never makes wrong.
func (s *lintSchema) dependents(t *lintTable, k string) []string {
	var out []string
	for _, ix := range t.indexes {
		if contains(ix.cols, k) || wordIn(ix.include, k) {
			out = append(out, "index "+ix.name)
		}
	}
	for _, c := range t.constraints {
		if contains(c.cols, k) {
			out = append(out, c.kind+" constraint "+c.name)
		}
	}
	for _, o := range t.order {
		if c := t.cols[o]; o != k && c.computed != "" && wordIn(c.computed, k) {
			out = append(out, "computed column "+c.name)
		}
	}
	sort.Strings(out)
	return out
}

// keyIndex is the index behind a PRIMARY KEY or UNIQUE constraint: a primary key is
// clustered unless it says NONCLUSTERED (or the table already has a clustered index); a
// unique constraint is nonclustered unless it says CLUSTERED.
func keyIndex(t *lintTable, name, kind, cl string, cols []string, file string) *lintIndex {
	pk := strings.HasPrefix(strings.ToUpper(kind), "PRIMARY")
	clustered := strings.EqualFold(cl, "CLUSTERED") || (pk && cl == "" && t.clusteredIndex() == nil)
	if name == "" {
		name = fmt.Sprintf("%s_%s_%s", map[bool]string{true: "PK", false: "UQ"}[pk], t.name, strings.Join(cols, "_"))
	}
	return &lintIndex{name: name, cols: cols, clustered: clustered, unique: true, origin: file}
}

func (s *lintSchema) addColumn(file string, t *lintTable, c *lintColumn) {
	k := strings.ToLower(c.name)
	if t.cols[k] != nil {
		s.fail(file, "%s.%s added twice", t.name, c.name)
		return
	}
	t.cols[k] = c
	t.order = append(t.order, k)
}

func (s *lintSchema) addIndex(file string, t *lintTable, ix *lintIndex) {
	for _, c := range ix.cols {
		if t.cols[c] == nil {
			s.fail(file, "index %s names %s.%s, which does not exist", ix.name, t.name, c)
		}
	}
	if ix.clustered {
		if cl := t.clusteredIndex(); cl != nil && !strings.EqualFold(cl.name, ix.name) {
			s.fail(file, "%s: a second clustered index %s (already %s)", t.name, ix.name, cl.name)
		}
	}
	t.indexes[strings.ToLower(ix.name)] = ix
}

func (s *lintSchema) dropIndex(file string, t *lintTable, name string, ifExists bool) {
	if t.indexes[strings.ToLower(name)] == nil && !ifExists {
		s.fail(file, "DROP INDEX %s: no such index on %s", name, t.name)
	}
	delete(t.indexes, strings.ToLower(name))
}

var (
	alterAdd     = regexp.MustCompile(`(?is)^ADD\s+(.*)$`)
	alterColumn  = regexp.MustCompile(`(?is)^ALTER\s+COLUMN\s+(.*)$`)
	dropColumn   = regexp.MustCompile(`(?is)^DROP\s+COLUMN\s+(?:IF\s+EXISTS\s+)?(.*)$`)
	dropConstr   = regexp.MustCompile(`(?is)^DROP\s+CONSTRAINT\s+(?:IF\s+EXISTS\s+)?\[?(\w+)\]?`)
	withOptions  = regexp.MustCompile(`(?is)\bWITH\s*\(.*$`)
	alterOptions = regexp.MustCompile(`(?is)^(SET|WITH\s+(NO)?CHECK|NOCHECK|CHECK|ENABLE|DISABLE|REBUILD)\b`)
)

func (s *lintSchema) alter(file string, t *lintTable, rest string) {
	switch {
	case alterAdd.MatchString(rest):
		list := withOptions.ReplaceAllString(alterAdd.FindStringSubmatch(rest)[1], "")
		for _, def := range splitTop(list) {
			s.definition(file, t, def)
		}
	case alterColumn.MatchString(rest):
		def := withOptions.ReplaceAllString(alterColumn.FindStringSubmatch(rest)[1], "")
		g := colType.FindStringSubmatch(def)
		if g == nil || t.cols[strings.ToLower(g[1])] == nil {
			s.fail(file, "%s: ALTER COLUMN not understood or no such column: %.80q", t.name, def)
			return
		}
		k := strings.ToLower(g[1])
		for _, d := range s.dependents(t, k) {
			s.fail(file, "%s: ALTER COLUMN %s while %s uses it (SQL Server error 5074; drop it first and recreate it after)", t.name, g[1], d)
		}
		name := t.cols[k].name
		delete(t.cols, k)
		t.order = remove(t.order, k)
		s.definition(file, t, def)
		t.cols[k].name = name
	case dropColumn.MatchString(rest):
		for _, c := range splitTop(dropColumn.FindStringSubmatch(rest)[1]) {
			k := strings.ToLower(strings.Trim(strings.TrimSpace(c), "[]"))
			if t.cols[k] == nil {
				s.fail(file, "%s: DROP COLUMN %s: no such column", t.name, c)
				continue
			}
			for _, d := range s.dependents(t, k) {
				s.fail(file, "%s: DROP COLUMN %s while %s uses it (SQL Server error 5074)", t.name, c, d)
			}
			delete(t.cols, k)
			t.order = remove(t.order, k)
		}
	case dropConstr.MatchString(rest):
		k := strings.ToLower(dropConstr.FindStringSubmatch(rest)[1])
		delete(t.indexes, k)
		delete(t.constraints, k)
	case alterOptions.MatchString(rest):
	default:
		s.fail(file, "%s: ALTER TABLE not understood: %.80q", t.name, rest)
	}
}

func remove(list []string, x string) []string {
	out := list[:0:0]
	for _, v := range list {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

// rekey moves m's entry at key from to key to (what sp_rename does to the model's maps) and
// returns it.
func rekey[V any](m map[string]V, from, to string) V {
	v := m[from]
	delete(m, from)
	m[to] = v
	return v
}

// rename applies sp_rename: 'dbo.T', 'U' (a table), 'dbo.T.C', 'D', 'COLUMN' and
// 'dbo.T.IX', 'IX2', 'INDEX' (or OBJECT for a constraint).
func (s *lintSchema) rename(file, from, to, typ string) {
	parts := strings.Split(tableKey(from), ".")
	switch {
	case typ == "COLUMN" && len(parts) == 2:
		t := s.table(file, parts[0])
		if t == nil || t.cols[parts[1]] == nil {
			s.fail(file, "sp_rename %s: no such column", from)
			return
		}
		nk := strings.ToLower(to)
		rekey(t.cols, parts[1], nk).name = to
		renameIn(t.order, parts[1], nk)
		for _, ix := range t.indexes {
			renameIn(ix.cols, parts[1], nk)
		}
		for _, ct := range t.constraints {
			renameIn(ct.cols, parts[1], nk)
		}
	case (typ == "INDEX" && len(parts) == 2) || (typ == "OBJECT" && len(parts) == 2):
		t := s.table(file, parts[0])
		if t == nil || t.indexes[parts[1]] == nil {
			s.fail(file, "sp_rename %s: no such index", from)
			return
		}
		rekey(t.indexes, parts[1], strings.ToLower(to)).name = to
	case typ == "OBJECT" && len(parts) == 1:
		t := s.table(file, parts[0])
		if t == nil {
			return
		}
		rekey(s.tables, t.name, tableKey(to)).name = tableKey(to)
	default:
		s.fail(file, "sp_rename %s %s %s not understood", from, to, typ)
	}
}

// renameIn replaces every from in cols (column keys, lower case) with to, in place.
func renameIn(cols []string, from, to string) {
	for i, c := range cols {
		if c == from {
			cols[i] = to
		}
	}
}

// keyWidth is the worst-case key width of ix, implicit key columns included.
func (s *lintSchema) keyWidth(t *lintTable, ix *lintIndex) (int, []string, error) {
	cols := append([]string(nil), ix.cols...)
	extra := 0
	cl := t.clusteredIndex()
	switch {
	case ix.clustered && !ix.unique:
		extra = 4 // the uniquifier of a nonunique clustered index
	case !ix.clustered && !ix.unique && cl != nil:
		// A nonunique nonclustered index holds the clustered key's columns in its key.
		for _, c := range cl.cols {
			if !contains(cols, c) {
				cols = append(cols, c)
			}
		}
		if !cl.unique {
			extra = 4
		}
	}
	w := extra
	for _, c := range cols {
		col := t.cols[c]
		if col == nil {
			return 0, cols, fmt.Errorf("no column %s", c)
		}
		cw, err := col.width(t)
		if err != nil {
			return 0, cols, err
		}
		w += cw
	}
	return w, cols, nil
}

func contains(list []string, x string) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// keyWidthViolations replays the migrations (name → text, applied in name order) and lists
// every key over its limit, plus what the model could not read (an error of the lint, so
// a statement it does not understand cannot hide a wide key).
func keyWidthViolations(migrations map[string]string) []string {
	s := replayed(migrations)
	out := append([]string(nil), s.errs...)
	for _, t := range s.tables {
		for _, ix := range t.indexes {
			w, cols, err := s.keyWidth(t, ix)
			if err != nil {
				out = append(out, fmt.Sprintf("%s on %s (%s): %v", ix.name, t.name, ix.origin, err))
				continue
			}
			limit, kind := maxNonclusteredKey, "nonclustered"
			if ix.clustered {
				limit, kind = maxClusteredKey, "clustered"
			}
			if w > limit {
				out = append(out, fmt.Sprintf("%s on %s (%s): %s key (%s) is up to %d bytes, over SQL Server's %d",
					ix.name, t.name, ix.origin, kind, strings.Join(cols, ", "), w, limit))
			}
		}
	}
	sort.Strings(out)
	return out
}

func readMigrations(t *testing.T, upTo string) map[string]string {
	t.Helper()
	return readFiles(t, mssql.Migrations(), "*.sql", func(f string) bool { return upTo == "" || f <= upTo })
}

// readFiles reads the files of fsys matching pattern that keep accepts, by name; it fails
// the test when the pattern matches no file at all.
func readFiles(t *testing.T, fsys fs.FS, pattern string, keep func(name string) bool) map[string]string {
	t.Helper()
	files, err := fs.Glob(fsys, pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: %v %v", pattern, files, err)
	}
	out := map[string]string{}
	for _, f := range files {
		if !keep(f) {
			continue
		}
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	return out
}

// TestKeyWidthsFitSQLServer: every primary key, unique constraint and index key of the
// migrated schema fits SQL Server's key limits for any values its columns can hold.
func TestKeyWidthsFitSQLServer(t *testing.T) {
	t.Parallel()
	for _, v := range keyWidthViolations(readMigrations(t, "")) {
		t.Error(v)
	}
}

// TestKeyWidthLintFoundMigration0011: the lint finds the keys that were too wide before
// migration 0031 (issue 32): the attribute tables' clustered keys of 1,100 bytes.
func TestKeyWidthLintFoundMigration0011(t *testing.T) {
	t.Parallel()
	got := keyWidthViolations(readMigrations(t, "0030_outbox_mark_in_place.sql"))
	want := []string{
		"PK_AttributeProcessedEvent on attributeprocessedevent (0011_attributes.sql): clustered key (businessunitid, entitytype, entityid, eventid) is up to 1100 bytes, over SQL Server's 900",
		"PK_AttributeValue on attributevalue (0011_attributes.sql): clustered key (businessunitid, entitytype, entityid, attributecode) is up to 1100 bytes, over SQL Server's 900",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations up to 0030:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestKeyWidthLintFixtures checks the lint itself on small migrations.
func TestKeyWidthLintFixtures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		migs map[string]string
		want []string // substrings, one per violation; none: the schema passes
	}{
		{"a wide clustered key", map[string]string{"0001.sql": `-- +goose Up
CREATE TABLE dbo.Wide (
    A nvarchar(300) NOT NULL,
    B nvarchar(200) NOT NULL,
    CONSTRAINT PK_Wide PRIMARY KEY CLUSTERED (A, B)
);
-- +goose Down
SELECT 1;`}, []string{"PK_Wide on wide (0001.sql): clustered key (a, b) is up to 1000 bytes, over SQL Server's 900"}},
		{"900 bytes fit a clustered key", map[string]string{"0001.sql": `-- +goose Up
CREATE TABLE dbo.Edge (
    A nvarchar(300) NOT NULL,
    B nvarchar(150) NOT NULL,
    CONSTRAINT PK_Edge PRIMARY KEY CLUSTERED (A, B)
);`}, nil},
		{"a wide unique constraint and index, INCLUDE not counted", map[string]string{"0001.sql": `-- +goose Up
CREATE TABLE dbo.T (
    Id bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_T PRIMARY KEY CLUSTERED,
    A  nvarchar(800) NOT NULL CONSTRAINT UQ_T_A UNIQUE,
    B  varchar(1000) NOT NULL,
    C  nvarchar(max) NULL
);
CREATE INDEX IX_T_B ON dbo.T (B) INCLUDE (C);
CREATE UNIQUE NONCLUSTERED INDEX IX_T_AB ON dbo.T (A, B);`}, []string{"IX_T_AB on t (0001.sql): nonclustered key (a, b) is up to 2600 bytes, over SQL Server's 1700"}},
		{"a column widened later", map[string]string{"0001.sql": `-- +goose Up
CREATE TABLE dbo.T (K nvarchar(400) NOT NULL CONSTRAINT PK_T PRIMARY KEY CLUSTERED);`,
			"0002.sql": `-- +goose Up
ALTER TABLE dbo.T DROP CONSTRAINT PK_T;
ALTER TABLE dbo.T ALTER COLUMN K nvarchar(500) NOT NULL;
ALTER TABLE dbo.T ADD CONSTRAINT PK_T PRIMARY KEY CLUSTERED (K);`}, []string{"PK_T on t (0002.sql): clustered key (k) is up to 1000 bytes"}},
		{"an index in dynamic SQL, renamed columns", map[string]string{"0001.sql": `-- +goose Up
CREATE TABLE dbo.T (Id int NOT NULL CONSTRAINT PK_T PRIMARY KEY CLUSTERED, A nvarchar(10) NULL);
ALTER TABLE dbo.T ADD Wide nchar(900) NULL;
EXEC sp_rename N'dbo.T.Wide', N'Wider', N'COLUMN';
DECLARE @with nvarchar(100) = N'';
EXEC (N'CREATE NONCLUSTERED INDEX IX_T_Wider ON dbo.T (Wider) WHERE A = N''x''' + @with);`}, []string{"IX_T_Wider on t (0001.sql): nonclustered key (wider, id) is up to 1804 bytes"}},
		{"implicit clustered key columns and the uniquifier", map[string]string{"0001.sql": `-- +goose Up
CREATE TABLE dbo.T (A nvarchar(440) NOT NULL, B nvarchar(420) NOT NULL);
CREATE CLUSTERED INDEX CX_T ON dbo.T (A);
CREATE INDEX IX_T_B ON dbo.T (B);
CREATE UNIQUE INDEX UQ_T_B ON dbo.T (B);`}, []string{"IX_T_B on t (0001.sql): nonclustered key (b, a) is up to 1724 bytes"}},
		{"a dropped index no longer counts", map[string]string{"0001.sql": `-- +goose Up
CREATE TABLE dbo.T (Id int NOT NULL CONSTRAINT PK_T PRIMARY KEY, A nvarchar(1000) NOT NULL);
CREATE INDEX IX_T_A ON dbo.T (A);
DROP INDEX IX_T_A ON dbo.T;`}, nil},
		{"a statement the lint cannot read fails", map[string]string{"0001.sql": `-- +goose Up
CREATE TABLE dbo.T (Id int NOT NULL CONSTRAINT PK_T PRIMARY KEY);
ALTER TABLE dbo.T SWITCH TO dbo.U;`}, []string{"ALTER TABLE not understood"}},
	}
	for _, c := range cases {
		wantFindings(t, c.name, "violation", keyWidthViolations(c.migs), c.want)
	}
}

// wantFindings fails t unless a lint case's findings got are one per want, in order, each
// containing its want (name names the case, what a finding: "error", "violation").
func wantFindings(t *testing.T, name, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %ss %q, want %d like %q", name, what, got, len(want), want)
		return
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("%s: %s %q, want it to contain %q", name, what, got[i], w)
		}
	}
}

// describe renders the model: every table's columns (type and length) and indexes (kind,
// key columns, INCLUDE and filter), sorted.
func (s *lintSchema) describe() string {
	var lines []string
	for _, t := range s.tables {
		for _, k := range t.order {
			c := t.cols[k]
			lines = append(lines, fmt.Sprintf("%s.%s %s(%d) %s", t.name, k, c.typ, c.length, c.computed))
		}
		for k, ix := range t.indexes {
			lines = append(lines, fmt.Sprintf("%s index %s clustered=%v unique=%v (%s) %s", t.name, k, ix.clustered, ix.unique, strings.Join(ix.cols, ", "), ix.include))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestRewrittenMigrationsLeaveTheSameSchema: 0025 and 0029 were rewritten in place to run
// online and batched (issue 32, item 8). goose records applied versions only, so that is
// safe only while both texts leave the same schema: this replays the first texts
// (testdata/*.first.sql) and the current ones and compares the models.
func TestRewrittenMigrationsLeaveTheSameSchema(t *testing.T) {
	t.Parallel()
	current := readMigrations(t, "")
	first := map[string]string{}
	for n, text := range current {
		first[n] = text
	}
	for _, n := range []string{"0025_delivery_fewer_random_keys.sql", "0029_delivery_updated_finished.sql"} {
		b, err := os.ReadFile(filepath.Join("testdata", strings.TrimSuffix(n, ".sql")+".first.sql"))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) == current[n] {
			t.Errorf("%s: the first text equals the current one", n)
		}
		first[n] = string(b)
	}
	a, b := schemaOf(t, first).describe(), schemaOf(t, current).describe()
	if a != b {
		t.Errorf("the rewritten migrations leave another schema:\nfirst:\n%s\n\ncurrent:\n%s", a, b)
	}
	if !strings.Contains(b, "notificationjob index ix_notificationjob_updated clustered=false unique=false (updatedon) include (status, businessunitid, channel) where status in ('', '', '')") {
		t.Errorf("the model lost IX_NotificationJob_Updated's filter:\n%s", b)
	}
}

// --- char/varchar compared with a parameter ---

var (
	queryTableRefs = regexp.MustCompile(`(?i)\b(?:FROM|JOIN|UPDATE|INTO|MERGE)\s+dbo\.(\w+)`)
	// column op @param, @param op column, and column op v.x where v is a VALUES row of
	// parameters (the multi-row statements).
	colOpParam = regexp.MustCompile(`(?i)\b(?:(\w+)\.)?(\w+)\s*(?:=|<>|!=|<=|>=|<|>|\bLIKE\b|\bIN\s*\(|\bBETWEEN\b)\s*(@\w+|v\.\w+)`)
	paramOpCol = regexp.MustCompile(`(?i)(@\w+|\bv\.\w+)\s*(?:=|<>|!=|<=|>=|<|>)\s*(?:(\w+)\.)?(\w+)\b`)
	// setList is an UPDATE's SET list: assignments, not comparisons.
	setList = regexp.MustCompile(`(?is)\bSET\b(.*?)(?:\bOUTPUT\b|\bFROM\b|\bWHERE\b|;|$)`)
)

// withoutSetLists blanks the SET lists of UPDATE statements.
func withoutSetLists(code string) string {
	b := []byte(code)
	for _, m := range setList.FindAllStringSubmatchIndex(code, -1) {
		for i := m[2]; i < m[3]; i++ {
			b[i] = ' '
		}
	}
	return string(b)
}

// narrowComparisons lists the comparisons of a char/varchar column of a table the query
// names with a parameter (or a VALUES column built from parameters).
func narrowComparisons(s *lintSchema, name, query string) []string {
	code := withoutSetLists(lintString.ReplaceAllString(lintLineComment.ReplaceAllString(query, " "), "''"))
	var tables []*lintTable
	for _, m := range queryTableRefs.FindAllStringSubmatch(code, -1) {
		if t := s.tables[tableKey(m[1])]; t != nil {
			tables = append(tables, t)
		}
	}
	var out []string
	check := func(col, param string) {
		if strings.HasPrefix(col, "@") || strings.EqualFold(col, "v") {
			return
		}
		for _, t := range tables {
			c := t.cols[strings.ToLower(col)]
			if c != nil && (c.typ == "char" || c.typ == "varchar") {
				out = append(out, fmt.Sprintf("%s: %s.%s is %s(%d), compared with %s (an nvarchar parameter): the column is converted, no seek; declare it nvarchar/nchar COLLATE Latin1_General_100_BIN2",
					name, t.name, c.name, c.typ, c.length, param))
			}
		}
	}
	for _, m := range colOpParam.FindAllStringSubmatch(code, -1) {
		if m[1] != "" && strings.EqualFold(m[1], "v") {
			continue
		}
		check(m[2], m[3])
	}
	for _, m := range paramOpCol.FindAllStringSubmatch(code, -1) {
		if m[2] != "" && strings.EqualFold(m[2], "v") {
			continue
		}
		check(m[3], m[1])
	}
	sort.Strings(out)
	return out
}

func migratedSchema(t *testing.T, upTo string) *lintSchema {
	t.Helper()
	return schemaOf(t, readMigrations(t, upTo))
}

// schemaOf applies migration texts (by file name) in file-name order to an empty model and
// reports every error of the model as a test error.
func schemaOf(t *testing.T, migs map[string]string) *lintSchema {
	t.Helper()
	s := replayed(migs)
	for _, e := range s.errs {
		t.Error(e)
	}
	return s
}

// TestNoNarrowStringComparedWithParameter: no query compares a char/varchar column with a
// parameter (go-mssqldb sends Go strings as nvarchar).
func TestNoNarrowStringComparedWithParameter(t *testing.T) {
	t.Parallel()
	s := migratedSchema(t, "")
	q := loadQueries(t)
	names := q.Names()
	sort.Strings(names)
	for _, n := range names {
		for _, v := range narrowComparisons(s, n, q.SQL(n)) {
			t.Error(v)
		}
	}
}

// TestNarrowComparisonLint checks the rule itself: the local-date comparisons it finds on
// the schema before migration 0032, and a fixture.
func TestNarrowComparisonLint(t *testing.T) {
	t.Parallel()
	s := migratedSchema(t, "0030_outbox_mark_in_place.sql")
	got := narrowComparisons(s, "DeliveryProjectionCounts", `SELECT LocalDate, Status, COUNT(*) FROM dbo.DeliveryProjection
WHERE BusinessUnitId = @BusinessUnitId AND LocalDate >= @FromDate AND LocalDate <= @ToDate GROUP BY LocalDate, Status;`)
	if len(got) != 2 || !strings.Contains(got[0], "deliveryprojection.LocalDate is char(10), compared with @FromDate") {
		t.Errorf("before 0032: %q", got)
	}
	fixture := newLintSchema()
	fixture.apply("0001.sql", `-- +goose Up
CREATE TABLE dbo.T (Id int NOT NULL CONSTRAINT PK_T PRIMARY KEY, Code varchar(20) NOT NULL, Name nvarchar(20) NOT NULL, Kind varchar(10) NOT NULL);`)
	got = narrowComparisons(fixture, "Q", `UPDATE t SET Name = @Name FROM dbo.T AS t
JOIN (VALUES (@Id, @Code)) AS v(i, c) ON t.Id = v.i AND t.Code = v.c
WHERE @Code2 = t.Code AND Name = @Name AND Kind = 'fixed' AND Kind IN (@K1, @K2);`)
	want := []string{"Q: t.Code is varchar(20), compared with @Code2", "Q: t.Code is varchar(20), compared with v.c", "Q: t.Kind is varchar(10), compared with @K1"}
	if len(got) != len(want) {
		t.Fatalf("fixture: %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("fixture: %q, want prefix %q", got[i], want[i])
		}
	}
}

// TestAttributeBoundsFitTheKeys: the attribute engine's input bounds (in UTF-8 bytes, so
// at most as many UTF-16 code units) fit the columns that store them, and every key of the
// attribute tables, counted at those bounds, fits SQL Server's limits: an event whose
// identifiers are each within bounds can always be stored (issue 32, item 1).
func TestAttributeBoundsFitTheKeys(t *testing.T) {
	t.Parallel()
	s := migratedSchema(t, "")
	bu := s.tables["businessunit"].cols["id"]
	bounds := map[string]int{ // column → the most characters an accepted input holds
		"businessunitid": bu.length, // it must name an existing business unit
		"entitytype":     attribute.MaxEntityTypeLen,
		"entityid":       attribute.MaxEntityIDLen,
		"attributecode":  attribute.MaxAttributeCodeLen,
		"eventid":        attribute.MaxEventIDLen,
	}
	for _, name := range []string{"attributevalue", "attributeprocessedevent", "attributedelta"} {
		tb := s.tables[name]
		if tb == nil {
			t.Fatalf("no table %s", name)
		}
		for col, n := range bounds {
			c := tb.cols[col]
			if c == nil {
				continue
			}
			if c.typ != "nvarchar" || c.length < n {
				t.Errorf("%s.%s is %s(%d); the engine accepts %d characters", name, col, c.typ, c.length, n)
			}
		}
		for _, ix := range tb.indexes {
			_, cols, err := s.keyWidth(tb, ix)
			if err != nil {
				t.Fatal(err)
			}
			w := 0
			for _, col := range cols {
				if n, ok := bounds[col]; ok {
					w += 2 * n
					continue
				}
				cw, err := tb.cols[col].width(tb)
				if err != nil {
					t.Fatal(err)
				}
				w += cw
			}
			if !ix.unique && ix.clustered || !ix.unique && !tb.clusteredIndex().unique {
				w += 4
			}
			limit := maxNonclusteredKey
			if ix.clustered {
				limit = maxClusteredKey
			}
			if w > limit {
				t.Errorf("%s on %s: %d bytes at the engine's input bounds, over %d", ix.name, name, w, limit)
			}
		}
	}
}
