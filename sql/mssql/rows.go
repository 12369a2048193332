package mssql

import (
	"bytes"
	"database/sql/driver"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/golang-sql/civil"
	mssqldb "github.com/microsoft/go-mssqldb"
)

// EncodeRows is the dialect's sqlstore.Dialect.EncodeRows: one statement's rows as a JSON
// array of objects, one member per row parameter, sent as one nvarchar(max) parameter
// (mssqldb.NVarCharMax) that the query reads with OPENJSON(@Rows) WITH (… '$.Name' …).
//
// Why: go-mssqldb declares a string parameter as nvarchar(<its length>) and a []byte as
// varbinary(<its length>) (makeStrParam and makeParam set ti.Size from the value; makeDecl
// prints it), and a NULL as nvarchar(1). A statement binding each row's members would get a
// new declaration list, so a new compiled plan, for nearly every mix of lengths and NULLs.
// NVarCharMax is always declared nvarchar(max) (makeParamExtra sets Size 0, which makeDecl
// prints as max), so each multi-row query has one declaration and one plan. Types come from
// the WITH clause, not from the values.
//
// Values: nil is null; strings, integers and bools are JSON strings, numbers and booleans;
// []byte is base64 (a nil []byte is null, as go-mssqldb binds it) (OPENJSON decodes base64
// into a varbinary column); civil.DateTime (what EncodeTime returns) is
// "YYYY-MM-DDThh:mm:ss.fff", read into datetime2(3); a driver.Valuer is encoded by its Value;
// a named string, integer or bool type as its underlying value. Anything else (a float, a
// time.Time not encoded by EncodeTime, a uint64 that may not fit bigint) is an error naming
// the member, so no row is sent with a value OPENJSON would misread.
func EncodeRows(rows []map[string]any) (any, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		keys := slices.AppendSeq(make([]string, 0, len(r)), maps.Keys(r)) // one allocation a row, as a loop would
		slices.Sort(keys)
		for j, k := range keys {
			if j > 0 {
				b.WriteByte(',')
			}
			name, _ := json.Marshal(k)
			b.Write(name)
			b.WriteByte(':')
			if err := encodeRowValue(&b, r[k]); err != nil {
				return nil, fmt.Errorf("row %d member %s: %w", i, k, err)
			}
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return mssqldb.NVarCharMax(b.String()), nil
}

// rowTimeLayout is how an instant travels in @Rows: the UTC wall clock to the millisecond,
// ISO 8601 without an offset (the datetime2(3) columns hold UTC by convention).
const rowTimeLayout = "2006-01-02T15:04:05.000"

func encodeRowValue(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		enc, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(enc)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case []byte:
		if x == nil {
			// As the driver binds a nil []byte: NULL, not an empty varbinary.
			b.WriteString("null")
			return nil
		}
		b.WriteByte('"')
		b.WriteString(base64.StdEncoding.EncodeToString(x))
		b.WriteByte('"')
	case civil.DateTime:
		b.WriteByte('"')
		b.WriteString(x.In(time.UTC).Format(rowTimeLayout))
		b.WriteByte('"')
	case driver.Valuer:
		dv, err := x.Value()
		if err != nil {
			return err
		}
		if _, again := dv.(driver.Valuer); again {
			return fmt.Errorf("%T: Value returned another Valuer", v)
		}
		return encodeRowValue(b, dv)
	default:
		// A named type over a string, integer or bool (as database/sql's default converter
		// accepts it for a plain parameter).
		switch rv := reflect.ValueOf(v); rv.Kind() {
		case reflect.String:
			return encodeRowValue(b, rv.String())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			b.WriteString(strconv.FormatInt(rv.Int(), 10))
		case reflect.Uint8, reflect.Uint16, reflect.Uint32:
			b.WriteString(strconv.FormatUint(rv.Uint(), 10))
		case reflect.Bool:
			b.WriteString(strconv.FormatBool(rv.Bool()))
		default:
			return fmt.Errorf("%T cannot be sent in a rows parameter", v)
		}
	}
	return nil
}
