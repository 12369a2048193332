// Package budgetapi holds the budget, price-policy and fee support routes (docs/budgets.md):
// thin adapters over budget.Service on shared/httpapi (problem details, strict JSON and
// query, ETag/If-Match, cursors, business-unit scope: a unit the caller may not see answers
// 404 and nothing is written). Amounts are strings of minor units ("150000"; an integer is
// accepted on input); a negative or fractional amount, a currency that is not the budget's,
// a maxCost below cost + reservedCost and a policy for an unknown action type are 422 and
// change nothing. Writes need the operator (X-Automation-Operator or the signed-in name) and
// are audited.
//
//	GET  /api/budgets/campaigns/{campaignId}?businessUnitId=…          → 200 view, ETag
//	PUT  /api/budgets/campaigns/{campaignId}?businessUnitId=…          {"currency","maxCost","reason"}
//	     without If-Match: create (201; 409 exists) — with If-Match: change maxCost (200; 412 stale)
//	POST /api/budgets/campaigns/{campaignId}/resume?businessUnitId=…   If-Match, {"reason"} → 200; 409 not paused
//	GET  /api/budgets/campaigns/{campaignId}/costs?businessUnitId=…&from=YYYY-MM-DD&to=YYYY-MM-DD
//	     → 200 {days:[{day,cost,fees,currency}], total, reconciliation:{…, differences:[…]}}
//	GET  /api/budgets/price-policies?businessUnitId=…                  → 200 {items:[policy]}
//	GET  /api/budgets/price-policies/{actionType}?businessUnitId=…     → 200 policy, ETag
//	PUT  /api/budgets/price-policies/{actionType}?businessUnitId=…     policy input; If-Match as above
//	GET  /api/budgets/fees/unknown?businessUnitId=…[&limit&cursor]      → 200 {items:[fee], nextCursor}
//	POST /api/budgets/fees/unknown/{orderId}/resolve                  If-Match "<revision>",
//	     {"businessUnitId","status":"SUCCEEDED"|"FAILED","reason"} → 200 fee; 409 not in doubt
//	GET  /api/budgets/waiting?businessUnitId=…[&limit]          → 200 {items:[waiting command]}
package budgetapi
