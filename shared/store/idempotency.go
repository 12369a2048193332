package store

import (
	"context"
	"time"
)

// IdempotencyRecord is the stored outcome of one request made with an Idempotency-Key
// header (docs/api-conventions.md#idempotency-key: same key + same body → the stored response; same
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
	Scope       string
	Key         string
	RequestHash string
	// LeaseExpiresOn is the lease IdempotencyBegin granted this attempt (its
	// Record.LeaseExpiresOn, UTC): the fence. An attempt whose lease was taken over by a
	// retry holds an older value and can no longer complete (or release) the record.
	LeaseExpiresOn      time.Time
	ResponseStatus      int
	ResponseHeadersJSON string
	ResponseBody        string
	Now                 time.Time // UTC
}

// IdempotencyReleaseParams frees the key of a started request that failed.
type IdempotencyReleaseParams struct {
	Scope          string
	Key            string
	RequestHash    string
	LeaseExpiresOn time.Time // the fence, as in IdempotencyCompleteParams
}

// IdempotencyStore keeps Idempotency-Key records in SQL.
type IdempotencyStore interface {
	// IdempotencyBegin claims (Scope, Key) for a request; see IdempotencyBeginResult.
	IdempotencyBegin(ctx context.Context, p IdempotencyBeginParams) (IdempotencyBeginResult, error)
	// IdempotencyComplete stores the response of a request that IdempotencyBegin started.
	// ErrNotFound when no in-progress record with that RequestHash and LeaseExpiresOn
	// exists (it completed already, was released, or a retry took it over).
	IdempotencyComplete(ctx context.Context, p IdempotencyCompleteParams) error
	// IdempotencyRelease deletes the in-progress record with that RequestHash and
	// LeaseExpiresOn (the request failed, so a retry must run it again). No error when none
	// exists: a record that completed, or that a retry took over, is left alone.
	IdempotencyRelease(ctx context.Context, p IdempotencyReleaseParams) error
	// IdempotencyPurge deletes up to limit (1..MaxBatch) records created before `before`
	// (UTC) and returns how many it deleted. An in-progress record whose lease has not
	// expired by `before` is kept (a retry of an old request may be running).
	IdempotencyPurge(ctx context.Context, before time.Time, limit int) (int, error)
}
