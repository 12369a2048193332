package attribute_test

import (
	"github.com/shopspring/decimal"

	"github.com/automation-platform/automation/shared/attribute"
)

type decimalT = decimal.Decimal

func decimalFrom(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func attributeFlusher(e *env) *attribute.Flusher {
	return &attribute.Flusher{Store: e.st, Clock: e.clock}
}
