package mssql_test

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/mssql"
)

// escalationLocks: SQL Server escalates a statement's locks on one index (or heap) of a
// table to a table lock once it holds this many (Lock escalation thresholds).
const escalationLocks = 5000

// lockingBatches lists every statement that takes a batch of @Limit rows and locks them
// (UPDATE/DELETE … TOP, or a locking read: UPDLOCK, HOLDLOCK, READPAST…), with why it
// cannot escalate to a table lock (docs/conventions.md#claim-sizes):
//
//	capped:   the store runs it with at most Dialect.MaxClaim rows (sqlstore claimSize;
//	          sql/sqlite TestClaimsNeverAskForMoreThanMaxClaim reads the @Limit sent);
//	bounded:  at most store.MaxBatch rows, each holding at most 2 locks on any one index
//	          (its key and that key's page; no key of the index moves), so at most
//	          2 × MaxBatch per index.
var lockingBatches = map[string]string{
	"SchedulerClaimDue":         "capped",  // moves keys in several indexes: 4 locks a row
	"OutboxClaim":               "capped",  // one read; the lease is one row
	"OutboxClaimDestination":    "capped",  // OutboxClaim of one destination: the same read and lease
	"AttributeDeltaOldest":      "bounded", // UPDLOCK read of the oldest deltas, clustered on Id
	"AttributeProcessedPurge":   "bounded", // DELETE TOP: each index loses one key a row
	"OutboxPurgePublished":      "bounded",
	"ProcessedEventPurge":       "bounded",
	"IdempotencyPurge":          "bounded",
	"ConsoleSessionPurge":       "bounded", // ended lifetimes, by the ExpiresOn index
	"MetricsSamplePurge":        "bounded",
	"MetricsCountPurge":         "bounded", // DELETE TOP by the clustered key's leading MinuteOn; no other index
	"MetricsCountFlushPurge":    "bounded", // DELETE TOP by the clustered key's leading MinuteOn; no other index
	"ReportOwnershipReleaseAll": "bounded", // sets Status/Version/UpdatedOn, in no index key
	"SupportSchedulerListHeld":  "bounded", // UPDLOCK read of held rows (a release batch)
}

var (
	topLimit   = regexp.MustCompile(`(?i)\bTOP\s*\(\s*@\w+\s*\)`)
	topLiteral = regexp.MustCompile(`(?i)\bTOP\s*(?:\(\s*(\d+)\s*\)|(\d+))(\s+PERCENT\b)?`)
	lockingSQL = regexp.MustCompile(`(?i)\b(UPDATE|DELETE|UPDLOCK|XLOCK|HOLDLOCK|READPAST|READCOMMITTEDLOCK|SERIALIZABLE|TABLOCK|PAGLOCK)\b`)
)

// literalTopFindings: a locking statement whose TOP is a number written in the query takes
// that many rows whatever the store asks, so it must be at most mssql.MaxClaim (and never a
// PERCENT, which grows with the table). A hostile review (issue 32) found that only
// TOP (@param) was checked: a claim written TOP (5000) with UPDLOCK passed.
func literalTopFindings(name, sql string) []string {
	code := lintLineComment.ReplaceAllString(sql, " ")
	if !lockingSQL.MatchString(code) {
		return nil
	}
	var out []string
	for _, m := range topLiteral.FindAllStringSubmatch(code, -1) {
		n, err := strconv.Atoi(m[1] + m[2])
		switch {
		case m[3] != "":
			out = append(out, fmt.Sprintf("%s: a locking statement takes TOP %s PERCENT, which grows with the table: take TOP (@Limit), capped by Dialect.MaxClaim", name, m[1]+m[2]))
		case err != nil || n > mssql.MaxClaim:
			out = append(out, fmt.Sprintf("%s: a locking statement takes TOP %s rows, over mssql.MaxClaim (%d): take TOP (@Limit), capped by Dialect.MaxClaim", name, m[1]+m[2], mssql.MaxClaim))
		}
	}
	return out
}

// TestLiteralTopLint checks the literal-TOP rule on the shapes it guards.
func TestLiteralTopLint(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"Select":  "SELECT TOP (5000) Id FROM dbo.Outbox WITH (UPDLOCK, READPAST) ORDER BY Id;",
		"Update":  "UPDATE TOP (5000) dbo.Outbox WITH (UPDLOCK, READPAST, ROWLOCK) SET Attempts = Attempts + 1 WHERE PublishedOn IS NULL;",
		"NoParen": "SELECT TOP 301 Id FROM dbo.Outbox WITH (UPDLOCK) ORDER BY Id;",
		"Percent": "DELETE TOP (10) PERCENT FROM dbo.Outbox WHERE PublishedOn IS NOT NULL;",
	}
	good := map[string]string{
		"One":        "SELECT TOP (1) Id FROM dbo.Outbox WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE Id = @Id;",
		"AtCap":      "UPDATE TOP (300) dbo.Outbox SET Attempts = 0 WHERE PublishedOn IS NULL;",
		"NotLocking": "SELECT TOP (5000) Id FROM dbo.Outbox ORDER BY Id;",
		"Comment":    "-- UPDATE TOP (5000) in a note\nSELECT TOP (5000) Id FROM dbo.Outbox;",
	}
	lintCatches(t, literalTopFindings, bad, good)
}

// TestClaimBatchesCannotEscalate: SQL Server's claims are capped at mssql.MaxClaim rows
// (about 300: issue 32, item 9), and every other statement that locks a batch of rows is
// listed with the bound that keeps it under the escalation threshold.
func TestClaimBatchesCannotEscalate(t *testing.T) {
	t.Parallel()
	if mssql.Dialect.MaxClaim != mssql.MaxClaim || mssql.MaxClaim <= 0 || mssql.MaxClaim > 300 {
		t.Errorf("mssql.Dialect.MaxClaim = %d (MaxClaim %d), want 1..300", mssql.Dialect.MaxClaim, mssql.MaxClaim)
	}
	// A claimed scheduler row moves a key in an index: a key deleted, one inserted, a page each.
	if 4*mssql.MaxClaim >= escalationLocks/2 {
		t.Errorf("MaxClaim %d: 4 locks a row on one index leave less than half of the %d for the rows read and skipped", mssql.MaxClaim, escalationLocks)
	}
	if 2*store.MaxBatch >= escalationLocks {
		t.Errorf("store.MaxBatch %d: a bounded batch may hold %d locks on one index, not under %d", store.MaxBatch, 2*store.MaxBatch, escalationLocks)
	}
	q := loadQueries(t)
	names := q.Names()
	sort.Strings(names)
	seen := map[string]bool{}
	for _, n := range names {
		for _, f := range literalTopFindings(n, q.SQL(n)) {
			t.Error(f)
		}
		code := lintLineComment.ReplaceAllString(q.SQL(n), " ")
		if !topLimit.MatchString(code) || !lockingSQL.MatchString(code) {
			continue
		}
		seen[n] = true
		if _, ok := lockingBatches[n]; !ok {
			t.Errorf("%s locks a batch of @Limit rows: cap it with Dialect.MaxClaim (sqlstore claimSize) or show its lock count, then list it in lockingBatches", n)
		}
	}
	for n := range lockingBatches {
		if !seen[n] {
			t.Errorf("lockingBatches lists %s, which no longer locks a TOP (@Limit) batch", n)
		}
	}
}
