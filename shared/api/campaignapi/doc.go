// Package campaignapi manages campaigns over HTTP (the CampaignsApi function,
// docs/campaigns.md#http-api): thin adapters over campaign.Admin on shared/httpapi (problem
// details, strict JSON and query, ETag/If-Match, cursors, business-unit scope: a campaign of a
// unit the caller may not see answers 404). openapi.yaml documents every route.
//
//	GET  /api/campaigns?businessUnitId=bu-1[&limit&cursor]          → 200 {"items":[campaign…],"nextCursor"}
//	PUT  /api/campaigns/{campaignId}  {"businessUnitId", name, status, triggers, actions}
//	     no If-Match: create (201; 409 when it exists); If-Match "<version>": replace (200; 412)
//	     422 naming the member: unknown action type or provider, a cycle, parameters failing
//	     the action's schema — nothing is stored
//	GET  /api/campaigns/{campaignId}?businessUnitId=bu-1            → 200 campaign, ETag
//	POST /api/campaigns/{campaignId}/rerun?businessUnitId=bu-1      If-Match → 200 (a new runId)
//	GET  /api/campaigns/{campaignId}/counts?businessUnitId&from&to  → 200 {"days":[{localDate,byStatus}],"freshTo"}
//	GET  /api/campaigns/{campaignId}/executions?businessUnitId[&limit&cursor] → 200 {"items":[execution…],"nextCursor"}, newest first
//	GET  /api/campaigns/{campaignId}/unknown-commands?businessUnitId[&limit&cursor]
//	POST /api/campaigns/{campaignId}/unknown-commands/{commandId}/resolve   If-Match, operator
//	     {"businessUnitId","status":"SUCCEEDED"|"FAILED","reason","providerRef"}
//	GET  /api/campaigns/_metrics[?businessUnitId=bu-1]              → 200 Metrics (docs/campaigns.md#metrics)
package campaignapi
