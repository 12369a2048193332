package store

import (
	"context"
	"time"
)

// IdempotencyRecord is the stored outcome of one request made with an Idempotency-Key
// header (ARCHITECTURE §6 "Sync APIs": same key + same body → the stored response; same
// key + different body → 422). Scope names who and where (the caller's scope and the
// request's method and path), so the same key sent to two routes or by two tenants never
// collides.
type IdempotencyRecord struct {
	Scope          string
	Key            string
	RequestHash    string // hex sha256 of the request body (JSON compacted)
	Completed      bool   // false: a request with this key is in progress (or crashed)
	ResponseStatus int    // HTTP status of the stored response; 0 while in progress
	// ResponseHeadersJSON holds the replayed headers (ETag, Location, Content-Type) as a
	// JSON object of strings; ResponseBody the body, both "" while in progress.
	ResponseHeadersJSON string
	ResponseBody        string
	LeaseExpiresOn      *time.Time // UTC; while in progress, after this a retry may take over
	CreatedOn           time.Time  // UTC
	CompletedOn         *time.Time // UTC
}

// IdempotencyBeginParams starts a request under (Scope, Key).
type IdempotencyBeginParams struct {
	Scope       string
	Key         string
	RequestHash string
	Now         time.Time     // UTC
	Lease       time.Duration // how long the request may run before a retry may take over (> 0)
}

// IdempotencyBeginResult: Started=true means this caller owns the key now (a new record, or
// an in-progress record with the same RequestHash whose lease had expired: the earlier
// attempt crashed). Started=false returns the existing record: completed (replay it, or 422
// when RequestHash differs) or in progress under a live lease (409, retry later).
type IdempotencyBeginResult struct {
	Started bool
	Record  IdempotencyRecord
}

// IdempotencyCompleteParams stores the response of a started request.
type IdempotencyCompleteParams struct {
	Scope               string
	Key                 string
	RequestHash         string
	ResponseStatus      int
	ResponseHeadersJSON string
	ResponseBody        string
	Now                 time.Time // UTC
}

// IdempotencyStore keeps Idempotency-Key records in SQL.
type IdempotencyStore interface {
	// IdempotencyBegin claims (Scope, Key) for a request; see IdempotencyBeginResult.
	IdempotencyBegin(ctx context.Context, p IdempotencyBeginParams) (IdempotencyBeginResult, error)
	// IdempotencyComplete stores the response of a request that IdempotencyBegin started.
	// ErrNotFound when no in-progress record with that RequestHash exists (it completed
	// already, or was released).
	IdempotencyComplete(ctx context.Context, p IdempotencyCompleteParams) error
	// IdempotencyRelease deletes an in-progress record with that RequestHash (the request
	// failed with a server error, so a retry must run it again). No error when none exists.
	IdempotencyRelease(ctx context.Context, scope, key, requestHash string) error
	// IdempotencyPurge deletes up to limit (1..MaxBatch) records created before `before`
	// (UTC) and returns how many it deleted.
	IdempotencyPurge(ctx context.Context, before time.Time, limit int) (int, error)
}
