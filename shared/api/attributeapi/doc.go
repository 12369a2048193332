// Package attributeapi reads the attribute engine's values over HTTP (the AttributesApi
// function, docs/attributes.md#read-api): thin adapters over attribute.Read and the ranking
// index, on shared/httpapi (problem details, strict query, business-unit scope: a business
// unit the caller may not see answers 404, like an unknown one).
//
//	GET /api/attributes/{entityType}/{entityId}?businessUnitId=bu-1[&asOf=RFC 3339]
//	    → 200 {"businessUnitId","entityType","entityId","asOf","attributes":[View…]}
//	      the period rule applied at asOf (default now): last week's weekly count reads 0
//	GET /api/attributes/{entityType}?businessUnitId=bu-1&attribute=total_redeem_count[&top=10]
//	    → 200 {"businessUnitId","entityType","attribute","items":[{"rank","entityId","value"}]}
//	      the top entities by a number attribute, read from the ranking index
package attributeapi
