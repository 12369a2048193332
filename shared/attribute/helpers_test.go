package attribute_test

import "github.com/shopspring/decimal"

type decimalT = decimal.Decimal

func decimalFrom(s string) decimal.Decimal { return decimal.RequireFromString(s) }
