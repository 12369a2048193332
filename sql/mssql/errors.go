package mssql

import (
	"errors"

	mssqldb "github.com/microsoft/go-mssqldb"
)

// permanentNumbers are SQL Server error numbers after which the same input can never be
// stored, so a retry cannot help (Database Engine events and errors, 1000-1999 and
// 2000-2999):
//
//	1946  "Operation failed. The index entry of length %d bytes for the index '%.*ls'
//	      exceeds the maximum length of %d bytes for %S_MSG indexes." One number for both
//	      limits: 900 bytes for a clustered index, 1,700 for a nonclustered one (SQL
//	      Server 2016+, Azure SQL). (1944 refuses the CREATE INDEX itself and 1945 is the
//	      warning a too-wide variable-length key gets when created; 1942 is about indexed
//	      views and unrelated.)
//	2628  "String or binary data would be truncated in table '%.*ls', column '%.*ls'."
//	      (SQL Server 2019+ and Azure SQL)
//	8152  "String or binary data would be truncated." (the same, before 2019 or with
//	      VERBOSE_TRUNCATION_WARNINGS off)
//
// The schema lint (schemalint_test.go) keeps every key within its limit for values that fit
// their columns, and the callers bound their inputs to the columns, so these are a backstop.
var permanentNumbers = map[int32]bool{1946: true, 2628: true, 8152: true}

// isPermanent is Dialect.IsPermanent: the store returns these errors as
// store.ErrValueTooLarge marked automation.Permanent (a message is dead-lettered, an HTTP
// request answered 422) instead of treating them as transient.
func isPermanent(err error) bool {
	var e mssqldb.Error
	return errors.As(err, &e) && permanentNumbers[e.Number]
}
