package mssql_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The collation rule of the schema lint (docs/conventions.md#sql-server-collation): the
// database default collation (SQL_Latin1_General_CP1_CI_AS, infra/) compares strings
// case-insensitively, while Go and SQLite (BINARY) compare them exactly: under it "bu-a" and
// "BU-A" are one business unit (a cross-unit leak) and two idempotency keys differing by case
// are one key (the second is absorbed as a duplicate: lost). So every string column of the
// migrated schema that is a key column of an index, a primary key or a unique constraint,
// or that a query compares (with a parameter, a VALUES row of parameters, or another
// column), carries a _BIN2 collation, unless collationAllowed names it with a reason.

// collationAllowed lists the string columns (table.column, lower case) that may keep the
// database's case-insensitive collation, each with its reason. Keep it short: a column
// here is compared or indexed without case.
var collationAllowed = map[string]string{
	"apikey.name": "an operator's display name for a key, not an identifier: IX_ApiKey_Name orders ApiKeyList, no query compares it, and two keys may share a name",
	// Enumerations: each column holds one of a closed set of values the code writes (a CHECK
	// constraint lists them where there is one), no two of which are equal ignoring case, and
	// queries compare it with the code's own constants; so case-insensitive matching finds
	// exactly the rows binary matching finds. Converting them would rewrite the hottest
	// tables' filtered indexes for no change in any answer.
	"automationscheduler.status":   "enumeration (CK_AutomationScheduler_Status)",
	"budgetreservation.status":     "enumeration (CK_BudgetReservation_Status)",
	"campaignbudget.status":        "enumeration (CK_CampaignBudget_Status)",
	"campaigncommand.status":       "enumeration (the campaign command states)",
	"campaignexecution.status":     "enumeration (CK on CampaignExecution.Status, 0016)",
	"deliveryprojection.status":    "enumeration (the delivery states)",
	"feetransfer.status":           "enumeration (CK_FeeTransfer_Status)",
	"deadletteraudit.action":       "enumeration (CK_DeadLetterAudit_Action)",
	"reportrunownership.ownertype": "enumeration (CK_ReportRunOwnership_OwnerType)",
}

// stringTypes are the types a collation applies to.
var stringTypes = map[string]bool{"nvarchar": true, "nchar": true, "varchar": true, "char": true}

var (
	// colOpCol is a comparison of two qualified columns (a join or correlated predicate).
	colOpCol = regexp.MustCompile(`(?i)\b(?:(\w+)\.)?(\w+)\s*(?:=|<>|!=|<=|>=|<|>)\s*(\w+)\.(\w+)\b`)
	// charIndex opens a CHARINDEX call; qualifiedWord is a column in its arguments.
	charIndex     = regexp.MustCompile(`(?i)\bCHARINDEX\s*\(`)
	qualifiedWord = regexp.MustCompile(`(?i)(?:\b(\w+)\.)?\b([A-Za-z_]\w*)\b`)
)

// comparedColumns returns the columns (table.column, lower case) of the tables a query
// names that it compares with a parameter, a VALUES column or another column. A bare or
// aliased column name counts for every table of the query that has it (the lint does not
// resolve aliases: it over-counts, never under-counts).
func comparedColumns(s *lintSchema, query string) []string {
	code := withoutSetLists(lintString.ReplaceAllString(lintLineComment.ReplaceAllString(query, " "), "''"))
	var tables []*lintTable
	for _, m := range queryTableRefs.FindAllStringSubmatch(code, -1) {
		if t := s.tables[tableKey(m[1])]; t != nil {
			tables = append(tables, t)
		}
	}
	seen := map[string]bool{}
	mark := func(qual, col string) {
		if strings.HasPrefix(col, "@") || strings.EqualFold(qual, "v") || strings.EqualFold(col, "v") {
			return
		}
		for _, t := range tables {
			if c := t.cols[strings.ToLower(col)]; c != nil {
				seen[t.name+"."+strings.ToLower(col)] = true
			}
		}
	}
	for _, m := range colOpParam.FindAllStringSubmatch(code, -1) {
		mark(m[1], m[2])
	}
	for _, m := range paramOpCol.FindAllStringSubmatch(code, -1) {
		mark(m[2], m[3])
	}
	for _, m := range colOpCol.FindAllStringSubmatch(code, -1) {
		mark(m[1], m[2])
		mark(m[3], m[4])
	}
	// CHARINDEX(a, b) compares its arguments too (under one collation, or error 468 when
	// two columns' implicit collations differ).
	for _, loc := range charIndex.FindAllStringIndex(code, -1) {
		args, _ := balanced(code, loc[1]-1)
		for _, m := range qualifiedWord.FindAllStringSubmatch(args, -1) {
			mark(m[1], m[2])
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// collationViolations lists every string column of s that is an index key column or in
// compared (table.column → the queries comparing it) and lacks a _BIN2 collation, unless
// allowed names it; and every allowed entry that names no such column (a stale entry).
func collationViolations(s *lintSchema, compared map[string][]string, allowed map[string]string) []string {
	var out []string
	used := map[string]bool{}
	for _, t := range s.tables {
		keyed := map[string][]string{}
		for _, ix := range t.indexes {
			for _, c := range ix.cols {
				keyed[c] = append(keyed[c], ix.name)
			}
		}
		for _, k := range t.order {
			c := t.cols[k]
			if !stringTypes[c.typ] {
				continue
			}
			var why []string
			if ixs := keyed[k]; len(ixs) > 0 {
				sort.Strings(ixs)
				why = append(why, "a key column of "+strings.Join(ixs, ", "))
			}
			if qs := compared[t.name+"."+k]; len(qs) > 0 {
				qs = append([]string(nil), qs...)
				sort.Strings(qs)
				if len(qs) > 3 {
					qs = append(qs[:3], fmt.Sprintf("%d more", len(qs)-3))
				}
				why = append(why, "compared by "+strings.Join(qs, ", "))
			}
			if len(why) == 0 {
				continue
			}
			if strings.HasSuffix(strings.ToUpper(c.collation), "_BIN2") {
				continue
			}
			if _, ok := allowed[t.name+"."+k]; ok {
				used[t.name+"."+k] = true
				continue
			}
			coll := c.collation
			if coll == "" {
				coll = "the database default (case-insensitive)"
			}
			out = append(out, fmt.Sprintf("%s.%s %s(%d) has collation %s; it is %s: declare it COLLATE Latin1_General_100_BIN2",
				t.name, c.name, c.typ, c.length, coll, strings.Join(why, "; ")))
		}
	}
	for k := range allowed {
		if !used[k] {
			out = append(out, fmt.Sprintf("collationAllowed names %s, which is no longer an indexed or compared string column without _BIN2: remove it", k))
		}
	}
	sort.Strings(out)
	return out
}

// queriesComparing maps table.column to the queries comparing it.
func queriesComparing(s *lintSchema, queries map[string]string) map[string][]string {
	out := map[string][]string{}
	for name, sql := range queries {
		for _, c := range comparedColumns(s, sql) {
			out[c] = append(out[c], name)
		}
	}
	return out
}

// TestKeyColumnsAreBIN2: every indexed or compared string column of the migrated schema
// has a _BIN2 collation (exact, case-sensitive, like Go and SQLite's BINARY), or is allowed
// with a reason.
func TestKeyColumnsAreBIN2(t *testing.T) {
	t.Parallel()
	s := migratedSchema(t, "")
	for _, v := range collationViolations(s, queriesComparing(s, mssqlQueries(t)), collationAllowed) {
		t.Error(v)
	}
}

// TestCollationLintFoundTheDefects: on the migrations before 0075 the rule finds the
// identifiers that were compared without case (the gateway events' unit and customer: a
// cross-unit leak; the outbox's destination and session: rows of another destination or
// session held back or skipped).
func TestCollationLintFoundTheDefects(t *testing.T) {
	t.Parallel()
	s := migratedSchema(t, "0070_outbox_retry_session.sql")
	got := collationViolations(s, queriesComparing(s, mssqlQueries(t)), collationAllowed)
	var cols []string
	for _, v := range got {
		f := strings.Fields(v)
		cols = append(cols, f[0])
	}
	want := []string{
		"automationscheduler.FailureReasonCode", "consolesession.Principal", "gatewayevent.BusinessUnitId", "gatewayevent.CustomerId", "idempotencykey.RequestHash",
		"outbox.ClaimToken", "outbox.Destination", "outbox.SessionId", "outboxlease.SkipDestinations",
	}
	if strings.Join(cols, " ") != strings.Join(want, " ") {
		t.Errorf("violations before 0075:\n%s\nwant the columns %q", strings.Join(got, "\n"), want)
	}
}

// TestMigration0075ChangesOnlyCollations: 0075 leaves every table, column (type, width,
// NULL-ability) and index (name, key, INCLUDE, filter, kind) as it found them and changes
// the collation of the nine columns only.
func TestMigration0075ChangesOnlyCollations(t *testing.T) {
	t.Parallel()
	before := migratedSchema(t, "0074~")
	after := migratedSchema(t, "0075~")
	if a, b := before.describe(), after.describe(); a != b {
		t.Errorf("0075 changed the schema beyond collations:\nbefore:\n%s\n\nafter:\n%s", a, b)
	}
	var changed []string
	for name, tb := range after.tables {
		for k, c := range tb.cols {
			old := before.tables[name].cols[k]
			if old.null != c.null {
				t.Errorf("%s.%s: NULL-ability %q, was %q", name, c.name, c.null, old.null)
			}
			if old.collation != c.collation {
				if c.collation != "Latin1_General_100_BIN2" {
					t.Errorf("%s.%s: collation %q", name, c.name, c.collation)
				}
				changed = append(changed, name+"."+c.name)
			}
		}
	}
	sort.Strings(changed)
	want := "automationscheduler.FailureReasonCode consolesession.Principal gatewayevent.BusinessUnitId gatewayevent.CustomerId idempotencykey.RequestHash outbox.ClaimToken outbox.Destination outbox.SessionId outboxlease.SkipDestinations"
	if strings.Join(changed, " ") != want {
		t.Errorf("0075 changed the collation of %q, want %s", changed, want)
	}
}

// TestCollationLintFixtures checks the rule itself on a small schema and queries.
func TestCollationLintFixtures(t *testing.T) {
	t.Parallel()
	s := newLintSchema()
	s.apply("0001.sql", `-- +goose Up
CREATE TABLE dbo.T (
    Id       bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_T PRIMARY KEY CLUSTERED,
    UnitId   nvarchar(100) NOT NULL,
    Code     nvarchar(50)  COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT UQ_T_Code UNIQUE,
    Token    nvarchar(64)  COLLATE SQL_Latin1_General_CP1_CS_AS NULL,
    Label    nvarchar(200) NULL,
    Kind     nvarchar(10)  NOT NULL,
    Keyed    nchar(10)     NOT NULL,
    Skip     nvarchar(400) NULL,
    Note     nvarchar(max) NULL
);
CREATE TABLE dbo.U (Id bigint NOT NULL CONSTRAINT PK_U PRIMARY KEY, Ref nvarchar(50) NOT NULL);
CREATE INDEX IX_T_Keyed ON dbo.T (Keyed) INCLUDE (Label);`)
	if len(s.errs) > 0 {
		t.Fatal(s.errs)
	}
	queries := map[string]string{
		"ByUnit":  `SELECT Id FROM dbo.T WHERE UnitId = @UnitId AND Note IS NULL;`,
		"ByToken": `UPDATE dbo.T SET Label = @Label WHERE @Token = Token;`,
		"Join":    `SELECT t.Id FROM dbo.T AS t JOIN dbo.U AS u ON u.Ref = t.Code;`,
		"Kinds":   `SELECT Id FROM dbo.T WHERE Kind IN (@K1, @K2);`,
		"Skips":   `SELECT t.Id FROM dbo.T AS t WHERE CHARINDEX(N'|' + t.Code + N'|', t.Skip) = 0;`,
	}
	got := collationViolations(s, queriesComparing(s, queries), map[string]string{"t.kind": "enumeration", "t.label": "stale"})
	want := []string{
		"collationAllowed names t.label",
		"t.Keyed nchar(10) has collation the database default (case-insensitive); it is a key column of IX_T_Keyed",
		"t.Skip nvarchar(400) has collation the database default (case-insensitive); it is compared by Skips",
		"t.Token nvarchar(64) has collation SQL_Latin1_General_CP1_CS_AS; it is compared by ByToken",
		"t.UnitId nvarchar(100) has collation the database default (case-insensitive); it is compared by ByUnit",
		"u.Ref nvarchar(50) has collation the database default (case-insensitive); it is compared by Join",
	}
	if len(got) != len(want) {
		t.Fatalf("violations:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("violation %q, want prefix %q", got[i], want[i])
		}
	}
}

// TestAlterColumnLintFixtures checks the ALTER COLUMN rule of the model: SQL Server refuses
// to alter a column (collation included) that an index (key, INCLUDE or filter), a CHECK or
// FOREIGN KEY constraint or a computed column uses (error 5074, then 4922), and the lint
// counts a DEFAULT too (stricter than the server); dropping them first and recreating them
// after passes.
func TestAlterColumnLintFixtures(t *testing.T) {
	t.Parallel()
	base := `-- +goose Up
CREATE TABLE dbo.P (Code nvarchar(20) NOT NULL CONSTRAINT PK_P PRIMARY KEY);
CREATE TABLE dbo.T (
    Id     bigint NOT NULL CONSTRAINT PK_T PRIMARY KEY CLUSTERED,
    A      nvarchar(20) NOT NULL,
    B      nvarchar(20) NOT NULL CONSTRAINT CK_T_B CHECK (B IN (N'x', N'y')),
    C      nvarchar(20) NULL,
    D      nvarchar(20) NOT NULL CONSTRAINT DF_T_D DEFAULT N'd',
    E      nvarchar(20) NULL CONSTRAINT FK_T_E REFERENCES dbo.P (Code),
    F      nvarchar(20) NULL,
    G      nvarchar(20) NULL,
    H      int NOT NULL,
    CONSTRAINT CK_T_FG CHECK (F <> G)
);
ALTER TABLE dbo.T ADD Twice AS (A + A);
ALTER TABLE dbo.T ADD CONSTRAINT DF_T_H DEFAULT 0 FOR H;
CREATE INDEX IX_T_C ON dbo.T (Id) INCLUDE (C) WHERE G IS NULL;`
	cases := []struct {
		name  string
		alter string
		want  []string // substrings, one per error; none: the migration passes
	}{
		{"a computed column reads it", `ALTER TABLE dbo.T ALTER COLUMN A nvarchar(20) COLLATE Latin1_General_100_BIN2 NOT NULL;`, []string{"ALTER COLUMN A while computed column Twice uses it"}},
		{"a CHECK reads it", `ALTER TABLE dbo.T ALTER COLUMN B nvarchar(20) COLLATE Latin1_General_100_BIN2 NOT NULL;`, []string{"ALTER COLUMN B while CHECK constraint CK_T_B uses it"}},
		{"an index includes it", `ALTER TABLE dbo.T ALTER COLUMN C nvarchar(20) COLLATE Latin1_General_100_BIN2 NULL;`, []string{"ALTER COLUMN C while index IX_T_C uses it (SQL Server error 5074"}},
		{"a DEFAULT (inline) reads it", `ALTER TABLE dbo.T ALTER COLUMN D nvarchar(20) COLLATE Latin1_General_100_BIN2 NOT NULL;`, []string{"ALTER COLUMN D while DEFAULT constraint DF_T_D uses it"}},
		{"a DEFAULT (added FOR it) reads it", `ALTER TABLE dbo.T ALTER COLUMN H bigint NOT NULL;`, []string{"ALTER COLUMN H while DEFAULT constraint DF_T_H uses it"}},
		{"a table CHECK reads each of its columns", `ALTER TABLE dbo.T ALTER COLUMN F nvarchar(40) COLLATE Latin1_General_100_BIN2 NULL;`, []string{"ALTER COLUMN F while CHECK constraint CK_T_FG uses it"}},
		{"a dropped DEFAULT no longer counts", `ALTER TABLE dbo.T DROP CONSTRAINT DF_T_D;
ALTER TABLE dbo.T ALTER COLUMN D nvarchar(20) COLLATE Latin1_General_100_BIN2 NOT NULL;
ALTER TABLE dbo.T ADD CONSTRAINT DF_T_D DEFAULT N'd' FOR D;`, nil},
		{"a FOREIGN KEY reads it", `ALTER TABLE dbo.T ALTER COLUMN E nvarchar(20) COLLATE Latin1_General_100_BIN2 NULL;`, []string{"ALTER COLUMN E while FOREIGN KEY constraint FK_T_E uses it"}},
		{"a table CHECK and a filter read it", `ALTER TABLE dbo.T ALTER COLUMN G nvarchar(20) COLLATE Latin1_General_100_BIN2 NULL;`, []string{"ALTER COLUMN G while CHECK constraint CK_T_FG uses it", "ALTER COLUMN G while index IX_T_C uses it"}},
		{"dropped first and recreated after", `DROP INDEX IX_T_C ON dbo.T;
ALTER TABLE dbo.T DROP CONSTRAINT CK_T_FG;
ALTER TABLE dbo.T ALTER COLUMN G nvarchar(20) COLLATE Latin1_General_100_BIN2 NULL;
ALTER TABLE dbo.T ADD CONSTRAINT CK_T_FG CHECK (F <> G);
CREATE INDEX IX_T_C ON dbo.T (Id) INCLUDE (C) WHERE G IS NULL;`, nil},
		{"in dynamic SQL too", `DECLARE @with nvarchar(40) = N'';
EXEC (N'ALTER TABLE dbo.T ALTER COLUMN B nvarchar(20) COLLATE Latin1_General_100_BIN2 NOT NULL' + @with);`, []string{"ALTER COLUMN B while CHECK constraint CK_T_B uses it"}},
	}
	for _, c := range cases {
		s := newLintSchema()
		s.apply("0001.sql", base)
		if len(s.errs) > 0 {
			t.Fatalf("base: %q", s.errs)
		}
		s.apply("0002.sql", "-- +goose Up\n"+c.alter)
		got := append([]string(nil), s.errs...)
		sort.Strings(got)
		wantFindings(t, c.name, "error", got, c.want)
	}
}
