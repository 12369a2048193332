package sql_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/automation-platform/automation/sql/sqlstore"
)

// TestSupportFindersExpand pins what the support finder template (queries/support_find.sql.tmpl,
// expanded by sqlstore.LoadQueries when the store starts) makes of each permutation, in every
// dialect: its driving seek, its index hint (SQLite's INDEXED BY, where the planner would
// otherwise pick a status index), its page predicate and its order. The SQLite plan test
// (sql/sqlite/support_plan_test.go) pins the plan each one gets.
func TestSupportFindersExpand(t *testing.T) {
	t.Parallel()
	type finder struct {
		name, seek, sqliteIndex string
		scheduleOrder           bool
	}
	finders := []finder{
		{name: "SupportSchedulerFindByKey", seek: "SchedulerKey = @SchedulerKey"},
		{name: "SupportSchedulerFindBySource", seek: "SourceEntityType = @SourceEntityType AND SourceEntityGuid = @SourceEntityGuid"},
		{name: "SupportSchedulerFindByBusinessUnitStatus", seek: "Status = @Status AND BusinessUnitId = @BusinessUnitId", sqliteIndex: "IX_AutomationScheduler_StatusId"},
		{name: "SupportSchedulerFindByBusinessUnit", seek: "BusinessUnitId = @BusinessUnitId"},
		{name: "SupportSchedulerFindByStatus", seek: "Status = @Status"},
		{name: "SupportSchedulerFindOnHold", seek: "IsOnSupportHold = 1", sqliteIndex: "IX_AutomationScheduler_Hold"},
		{name: "SupportSchedulerFindAll"},
		{name: "SupportSchedulerFindByScheduledOn", scheduleOrder: true},
	}
	filters := []string{
		"(@SchedulerKey IS NULL OR SchedulerKey = @SchedulerKey)",
		"(@SourceEntityType IS NULL OR (SourceEntityType = @SourceEntityType AND SourceEntityGuid = @SourceEntityGuid))",
		"(@BusinessUnitId IS NULL OR BusinessUnitId = @BusinessUnitId)",
		"(@Status IS NULL OR Status = @Status)",
		"(@OnHold IS NULL OR IsOnSupportHold = @OnHold)",
		"(@ScheduledFrom IS NULL OR ScheduledOn >= @ScheduledFrom)",
		"(@ScheduledTo IS NULL OR ScheduledOn < @ScheduledTo)",
		"(@AllUnits = 1 OR BusinessUnitId IN",
	}
	columns := "Id, Guid, AutomationType, TriggerType, SchedulerKey, SettingGuid, SourceEntityType, SourceEntityGuid, BusinessUnitId, ScheduledOn, ScheduledLocalDate, ScheduledLocalTime, TimeZoneId, Status, ProcessingLeaseExpiresOn, RetryCount, NextRetryOn, FailureReasonCode, ReasonCode, IsOnSupportHold, InputHash, ConflictInputHash, DispatchResultJson, TraceBlobName, Version, CreatedOn, UpdatedOn, CompletedOn, TraceParent"
	units := map[string]string{
		"sqlite": "(SELECT value FROM json_each(@Units))",
		"mssql":  "(SELECT CAST(u.value AS nvarchar(100)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(@Units) AS u)",
	}
	for _, d := range dialects {
		q := load(t, d)
		for _, f := range finders {
			// The expected statement, line by line (leading white space folded).
			var want []string
			if d.name == "mssql" {
				want = append(want, "SELECT TOP (@Limit) "+columns, "FROM dbo.AutomationScheduler")
			} else if f.sqliteIndex != "" {
				want = append(want, "SELECT "+columns, "FROM AutomationScheduler INDEXED BY "+f.sqliteIndex)
			} else {
				want = append(want, "SELECT "+columns, "FROM AutomationScheduler")
			}
			page, order := "Id < @BeforeId", "ORDER BY Id DESC"
			if f.scheduleOrder {
				page, order = "ScheduledOn >= @AfterOn AND (ScheduledOn > @AfterOn OR Id > @AfterId)", "ORDER BY ScheduledOn, Id"
			}
			if f.seek == "" {
				want = append(want, "WHERE "+page)
			} else {
				want = append(want, "WHERE "+f.seek, "AND "+page)
			}
			for _, filter := range filters {
				want = append(want, "AND "+filter)
			}
			want[len(want)-1] += " " + units[d.name] + ")"
			want = append(want, order)
			if d.name == "mssql" {
				want = append(want, "OPTION (RECOMPILE);")
			} else {
				want = append(want, "LIMIT @Limit;")
			}
			var got []string
			for _, line := range strings.Split(q.SQL(f.name), "\n") {
				if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "--") {
					got = append(got, line)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s %s expands to\n%s\nwant\n%s", d.name, f.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
}

// TestLoadQueriesExpandsTemplates: a *.sql.tmpl file is expanded and its blocks load like a
// plain file's; a name defined both in a template and a plain file is refused, and so is a
// template that does not expand, naming the file.
func TestLoadQueriesExpandsTemplates(t *testing.T) {
	t.Parallel()
	tmpl := `{{define "q"}}
-- name: {{.name}} :one
SELECT {{.col}} FROM T;
{{- end}}
{{template "q" (dict "name" "TA" "col" "A")}}
{{template "q" (dict "name" "TB" "col" "B")}}
`
	q, err := sqlstore.LoadQueries(fstest.MapFS{"t.sql.tmpl": {Data: []byte(tmpl)}, "p.sql": {Data: []byte("-- name: P :one\nSELECT 1;\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.SQL("TA") + "|" + q.SQL("TB") + "|" + q.SQL("P"); got != "SELECT A FROM T;|SELECT B FROM T;|SELECT 1;" {
		t.Errorf("loaded %q", got)
	}
	if _, err := sqlstore.LoadQueries(fstest.MapFS{"t.sql.tmpl": {Data: []byte(tmpl)}, "p.sql": {Data: []byte("-- name: TA :one\nSELECT 1;\n")}}); err == nil || !strings.Contains(err.Error(), "TA defined twice") {
		t.Errorf("a name in both a template and a file: %v, want defined twice", err)
	}
	if _, err := sqlstore.LoadQueries(fstest.MapFS{"bad.sql.tmpl": {Data: []byte(`{{template "q" (dict "name")}}`)}}); err == nil || !strings.Contains(err.Error(), "bad.sql.tmpl") {
		t.Errorf("a template that does not expand: %v, want an error naming bad.sql.tmpl", err)
	}
}
