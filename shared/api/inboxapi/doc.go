// Package inboxapi holds the routes of the InboxApi function (docs/inbox.md): thin adapters
// over inbox.Service on shared/httpapi (problem details, strict query, If-Match, cursors,
// business-unit scope: a business unit the caller may not see answers 404 and nothing is
// written).
//
//	GET  /api/inbox/{recipientId}?businessUnitId=bu-1[&state=unread|read|all][&limit=20][&cursor=…]
//	     → 200 {"items":[Message…], "nextCursor":"…"}  newest first
//	POST /api/inbox/{recipientId}/messages/{id}/read?businessUnitId=bu-1   If-Match: "<version>"
//	     → 200 Message, ETag its version; 428 without If-Match, 412 stale, 404 unknown
//	GET  /api/inbox/{recipientId}/stream?businessUnitId=bu-1   [Last-Event-ID: <id>]
//	     → 200 text/event-stream: "id: <id>\nevent: message\ndata: <Message JSON>\n\n" per
//	       message with id > Last-Event-ID in id order, ": heartbeat" comments; 503 with
//	       Retry-After when the instance holds its maximum of streams
//
// A message's id is its number in the recipient's inbox (1, 2, 3, … in commit order).
package inboxapi
