package mssql

import (
	"errors"
	"fmt"
	"testing"

	mssqldb "github.com/microsoft/go-mssqldb"
)

// An index entry over SQL Server's key limit (1946, for the 900-byte clustered and the
// 1,700-byte nonclustered limit alike) and a value longer than its column (2628, 8152) are
// permanent: the dialect says so, and never that they are worth a retry.
func TestPermanentErrors(t *testing.T) {
	t.Parallel()
	for _, n := range []int32{1946, 2628, 8152} {
		err := fmt.Errorf("mssql AttributeInsert: %w", mssqldb.Error{Number: n, Message: "Operation failed."})
		if !isPermanent(err) || Dialect.IsPermanent == nil || !Dialect.IsPermanent(err) {
			t.Errorf("error %d is not permanent", n)
		}
		if isRetryable(err) {
			t.Errorf("error %d is retryable", n)
		}
	}
	for _, err := range []error{mssqldb.Error{Number: 1205}, mssqldb.Error{Number: 2627}, mssqldb.Error{Number: 1945}, errors.New("Operation failed. 1946")} {
		if isPermanent(err) {
			t.Errorf("%v is permanent", err)
		}
	}
}
