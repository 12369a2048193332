package httpapi

import (
	"context"
	"errors"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

type unitsFunc func(id string) error

func (f unitsFunc) BusinessUnitGet(_ context.Context, id string) (store.BusinessUnit, error) {
	return store.BusinessUnit{ID: id}, f(id)
}

// UnitStored: a stored unit passes, an unknown one is a 404 naming it (as one outside the
// scope), another store error is passed on as it is, and no reader checks nothing.
func TestUnitStored(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("disk on fire")
	if err := UnitStored(ctx, unitsFunc(func(string) error { return nil }), "bu-1"); err != nil {
		t.Errorf("stored unit: %v", err)
	}
	err := UnitStored(ctx, unitsFunc(func(string) error { return store.ErrNotFound }), "bu-9")
	if automation.CodeOf(err) != automation.CodeNotFound || err.Error() != `business unit "bu-9" not found` {
		t.Errorf("unknown unit: %v (%s)", err, automation.CodeOf(err))
	}
	if err := UnitStored(ctx, unitsFunc(func(string) error { return boom }), "bu-1"); !errors.Is(err, boom) {
		t.Errorf("store error: %v", err)
	}
	if err := UnitStored(ctx, nil, "bu-1"); err != nil {
		t.Errorf("nil reader: %v", err)
	}
}
