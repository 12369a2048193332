package mssql

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/golang-sql/civil"
	mssqldb "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/azuread"
)

func TestUsesFedAuth(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"sqlserver://sa:pw@localhost:1433?database=automation":                                            false,
		"server=localhost;user id=sa;password=pw;database=automation":                                     false,
		"sqlserver://srv.database.windows.net?database=automation&fedauth=ActiveDirectoryManagedIdentity": true,
		"server=srv.database.windows.net;database=automation;FedAuth=ActiveDirectoryDefault":              true,
	}
	for dsn, want := range cases {
		if got := usesFedAuth(dsn); got != want {
			t.Errorf("usesFedAuth(%q) = %v, want %v", dsn, got, want)
		}
	}
}

// A fedauth DSN goes through the azuread connector: its own validation rejects a
// workflow without the parameters it needs, before any network access.
func TestOpenDBUsesAzureADForFedAuth(t *testing.T) {
	t.Parallel()
	_, err := OpenDB("sqlserver://srv.database.windows.net?database=automation&fedauth=ActiveDirectoryPassword")
	if err == nil || !strings.Contains(err.Error(), azuread.DriverName) {
		t.Fatalf("OpenDB with fedauth=ActiveDirectoryPassword and no client id: %v", err)
	}
	db, err := OpenDB("sqlserver://srv.database.windows.net?database=automation&fedauth=ActiveDirectoryManagedIdentity")
	if err != nil {
		t.Fatalf("OpenDB with fedauth=ActiveDirectoryManagedIdentity: %v", err)
	}
	db.Close()
}

// go-mssqldb must accept the encoded instant as is (it then sends a civil.DateTime as a
// datetime2 parameter; a time.Time would go as datetimeoffset).
func TestDriverAcceptsEncodedTime(t *testing.T) {
	t.Parallel()
	nv := &driver.NamedValue{Name: "Now", Ordinal: 1, Value: EncodeTime(time.Date(2026, 10, 1, 9, 30, 0, 123_456_789, time.UTC))}
	if err := (&mssqldb.Conn{}).CheckNamedValue(nv); err != nil {
		t.Fatal(err)
	}
	want := civil.DateTime{Date: civil.Date{Year: 2026, Month: 10, Day: 1}, Time: civil.Time{Hour: 9, Minute: 30, Nanosecond: 123_000_000}}
	if got, ok := nv.Value.(civil.DateTime); !ok || got != want {
		t.Fatalf("driver value %#v, want %#v", nv.Value, want)
	}
}

func TestWithDefaultTimeouts(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"sqlserver://sa:x@host:1433?database=d":         "connection+timeout=30",
		"server=host;user id=sa;password=x;database=d":  "connection timeout=30;dial timeout=15",
		"sqlserver://h?database=d&connection+timeout=5": "connection+timeout=5",
		"server=h;database=d;dial timeout=3;":           "dial timeout=3;",
	}
	for in, want := range cases {
		if got := WithDefaultTimeouts(in); !strings.Contains(got, want) {
			t.Errorf("%q → %q, want it to contain %q", in, got, want)
		}
	}
}

func TestRetryableErrors(t *testing.T) {
	t.Parallel()
	if !isRetryable(fmt.Errorf("wrapped: %w", mssqldb.Error{Number: 1205})) || isRetryable(mssqldb.Error{Number: 2627}) || isRetryable(errors.New("x")) {
		t.Fatal("deadlock victim must retry; a duplicate key or a plain error must not")
	}
}

// TestEncodeRowsDeclaresOneType: whatever the rows hold (strings of any length, NULLs, bytes,
// instants), a multi-row statement binds one value of one driver type, NVarCharMax, which
// go-mssqldb always declares nvarchar(max) (makeParamExtra: Size 0; makeDecl prints max):
// the declaration, and so the cached plan, never depends on the values (issue 32, plan-cache
// churn). A plain string, as the per-row form bound, would be declared nvarchar(<length>).
// The JSON holds each member as OPENJSON reads it.
func TestEncodeRowsDeclaresOneType(t *testing.T) {
	t.Parallel()
	at := EncodeTime(time.Date(2026, 10, 1, 9, 30, 0, 123_456_789, time.UTC))
	type status string
	short := []map[string]any{{"Id": int64(1), "Key": "a", "Body": []byte{0, 1, 2}, "Now": at, "Hold": 1, "Next": nil, "Status": status("Sent")}}
	long := []map[string]any{
		{"Id": int64(2), "Key": strings.Repeat("k", 4100), "Body": []byte{}, "Now": at, "Hold": 0, "Next": at},
		{"Id": int64(3), "Key": `quote " and \ and ü`, "Body": nil, "Now": at, "Hold": true, "Next": sql.NullString{}},
	}
	var got []any
	for _, rows := range [][]map[string]any{short, long} {
		v, err := EncodeRows(rows)
		if err != nil {
			t.Fatal(err)
		}
		nv := &driver.NamedValue{Name: "Rows", Ordinal: 1, Value: v}
		if err := (&mssqldb.Conn{}).CheckNamedValue(nv); err != nil {
			t.Fatal(err)
		}
		if _, ok := nv.Value.(mssqldb.NVarCharMax); !ok {
			t.Fatalf("@Rows goes to the driver as %T, want mssqldb.NVarCharMax (declared nvarchar(max))", nv.Value)
		}
		got = append(got, v)
	}
	var decoded []map[string]any
	if err := json.Unmarshal([]byte(got[1].(mssqldb.NVarCharMax)), &decoded); err != nil {
		t.Fatal(err)
	}
	if len(decoded) != 2 || decoded[1]["Key"] != `quote " and \ and ü` || decoded[1]["Body"] != nil || decoded[1]["Hold"] != true ||
		decoded[0]["Now"] != "2026-10-01T09:30:00.123" || decoded[0]["Body"] != "" || decoded[1]["Next"] != nil || decoded[0]["Id"] != float64(2) {
		t.Fatalf("decoded %v", decoded)
	}
	if s := string(got[0].(mssqldb.NVarCharMax)); !strings.Contains(s, `"Body":"AAEC"`) || !strings.Contains(s, `"Next":null`) || !strings.Contains(s, `"Status":"Sent"`) {
		t.Fatalf("short rows %s", s)
	}
	for _, bad := range []any{1.5, time.Now(), struct{}{}, uint64(1)} {
		if _, err := EncodeRows([]map[string]any{{"Amount": bad}}); err == nil || !strings.Contains(err.Error(), "Amount") {
			t.Errorf("%T accepted: %v", bad, err)
		}
	}
}

// EncodeRows keeps every value as the per-row form bound it (a hostile review, issue 32):
// a nil []byte was sent as "" (an empty varbinary) where go-mssqldb binds NULL
// (writeShortLenType/writePLPType write NULL for a nil buffer); strings with quotes, NUL,
// control characters, HTML characters, line separators, astral characters and invalid
// UTF-8 (which the driver, too, sends as U+FFFD) decode back as JSON gives them to
// OPENJSON; instants at the edges of datetime2 keep their milliseconds.
func TestEncodeRowsHostileValues(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ü\"\\", 100_000)
	strs := []string{"", `'; DROP TABLE x; --`, "a\x00b", "\t\n\r\b\f\x01\x1f", "<>&", "\u2028\u2029", "😀𝄞", long}
	row := map[string]any{"NilBytes": []byte(nil), "Bytes": []byte{0, 0xff, '"'}}
	for i, s := range strs {
		row[fmt.Sprintf("S%d", i)] = s
	}
	row["Bad"] = "a\xffb"
	row["Min"] = EncodeTime(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC))
	row["Max"] = EncodeTime(time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC))
	row["Sub"] = EncodeTime(time.Date(2026, 10, 1, 9, 30, 0, 1_999_999, time.FixedZone("x", 7*3600)))
	row["Big"] = int64(math.MaxInt64)
	row["Small"] = int64(math.MinInt64)
	v, err := EncodeRows([]map[string]any{row})
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v.(mssqldb.NVarCharMax)), &got); err != nil || len(got) != 1 {
		t.Fatalf("%v %d", err, len(got))
	}
	if s := string(got[0]["NilBytes"]); s != "null" {
		t.Errorf("nil []byte sent as %s, want null (the driver binds NULL)", s)
	}
	var b64 string
	if err := json.Unmarshal(got[0]["Bytes"], &b64); err != nil || b64 != "AP8i" {
		t.Errorf("bytes %s", got[0]["Bytes"])
	}
	for i, want := range strs {
		var s string
		if err := json.Unmarshal(got[0][fmt.Sprintf("S%d", i)], &s); err != nil || s != want {
			t.Errorf("string %d changed (%v)", i, err)
		}
	}
	var bad string
	if err := json.Unmarshal(got[0]["Bad"], &bad); err != nil || bad != "a\uFFFDb" {
		t.Errorf("invalid UTF-8: %q", bad)
	}
	for k, want := range map[string]string{"Min": `"0001-01-01T00:00:00.000"`, "Max": `"9999-12-31T23:59:59.999"`, "Sub": `"2026-10-01T02:30:00.001"`,
		"Big": "9223372036854775807", "Small": "-9223372036854775808"} {
		if s := string(got[0][k]); s != want {
			t.Errorf("%s sent as %s, want %s", k, s, want)
		}
	}
}
