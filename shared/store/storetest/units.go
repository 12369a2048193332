package storetest

import (
	"context"
	"testing"

	"github.com/automation-platform/automation/shared/store"
)

// SydneyAndNewYork are the two business units the service tests share: bu-syd
// (Australia/Sydney) and bu-nyc (America/New_York), zones on either side of UTC with DST
// changes in opposite halves of the year.
var SydneyAndNewYork = []store.BusinessUnit{
	{ID: "bu-syd", Name: "Sydney", TimeZoneID: "Australia/Sydney"},
	{ID: "bu-nyc", Name: "New York", TimeZoneID: "America/New_York"},
}

// UnitUpserter is the part of a store Units writes to (store.Store has it).
type UnitUpserter interface {
	BusinessUnitUpsert(ctx context.Context, bu store.BusinessUnit) error
}

// Units stores units in st (BusinessUnitUpsert), in order; an error fails t at once.
func Units(t testing.TB, st UnitUpserter, units ...store.BusinessUnit) {
	t.Helper()
	for _, bu := range units {
		if err := st.BusinessUnitUpsert(context.Background(), bu); err != nil {
			t.Fatal(err)
		}
	}
}
