// Package money is the one representation of an amount of money in the pipeline: an exact
// count of a currency's minor units (int64) plus its ISO 4217 code. There are no floats
// anywhere: JSON carries amounts as decimal strings of minor units ("150000"), and fee
// formulas compute with exact decimals (github.com/shopspring/decimal) and round once.
//
// Rules (docs/budgets.md#money):
//   - a currency is a three-letter upper-case ISO 4217 code known to golang.org/x/text/currency;
//     its minor-unit exponent (digits after the decimal point: VND 0, USD 2, KWD 3) comes from
//     the same library (CLDR data), never from a table of our own;
//   - an amount is a non-negative integer of minor units, at most MaxMinor;
//   - the one rounding rule is RoundHalfUp: a fee formula's exact result is rounded once, at the
//     end, to a whole minor unit, halves going up (12.5 → 13); amounts are never negative so
//     "up" and "away from zero" agree;
//   - amounts in different currencies never mix: Add and Sub refuse them, and Convert turns
//     one into another only with an explicit exact rate (a price policy's conversion).
//
// There is no state machine here: values only.
package money
