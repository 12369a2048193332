package httpapi_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// A value the database refused as too large for its schema (as sql/sqlstore returns SQL
// Server's error 1946: store.ErrValueTooLarge, marked permanent, wrapped by the store method)
// is the caller's input: 422, not a 500 to retry.
func TestValueTooLargeIs422(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("mssql CampaignUpsert: %w", automation.Permanent(fmt.Errorf("%w: %w", store.ErrValueTooLarge,
		errors.New("mssql: Operation failed. The index entry of length 1800 bytes for the index 'IX' exceeds the maximum length of 1700 bytes for nonclustered indexes."))))
	if got := httpapi.StatusOf(err); got != http.StatusUnprocessableEntity {
		t.Fatalf("StatusOf = %d, want 422", got)
	}
}
