package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

func testIdempotency(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	begin := func(key, hash string, now time.Time) store.IdempotencyBeginResult {
		t.Helper()
		r, err := s.IdempotencyBegin(ctx, store.IdempotencyBeginParams{Scope: "POST /api/x", Key: key, RequestHash: hash, Now: now, Lease: time.Minute})
		if err != nil {
			t.Fatalf("IdempotencyBegin(%s): %v", key, err)
		}
		return r
	}

	first := begin("k1", "h1", T0)
	lease := func(r store.IdempotencyBeginResult) time.Time {
		t.Helper()
		if r.Record.LeaseExpiresOn == nil {
			t.Fatalf("a started record has no lease: %+v", r)
		}
		return *r.Record.LeaseExpiresOn
	}
	if !first.Started || first.Record.Completed || first.Record.RequestHash != "h1" || !first.Record.CreatedOn.Equal(T0) {
		t.Fatalf("first begin = %+v, want started in-progress record", first)
	}
	if second := begin("k1", "h1", T0.Add(time.Second)); second.Started || second.Record.Completed {
		t.Fatalf("begin during a live lease = %+v, want not started, in progress", second)
	}
	if other := begin("k1", "h2", T0.Add(2*time.Minute)); other.Started {
		t.Fatalf("a different body must never take over an in-progress key: %+v", other)
	}
	// The first attempt crashed: after the lease, a retry with the same body takes over.
	retry := begin("k1", "h1", T0.Add(2*time.Minute))
	if !retry.Started {
		t.Fatalf("retry after the lease expired = %+v, want started", retry)
	}
	if err := s.IdempotencyComplete(ctx, store.IdempotencyCompleteParams{Scope: "POST /api/x", Key: "k1", RequestHash: "h2",
		LeaseExpiresOn: lease(retry), ResponseStatus: 201, ResponseBody: `{}`, Now: T0}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("complete with another hash: err = %v, want ErrNotFound", err)
	}
	// The first attempt, whose lease was taken over, can neither complete nor release.
	if err := s.IdempotencyComplete(ctx, store.IdempotencyCompleteParams{Scope: "POST /api/x", Key: "k1", RequestHash: "h1",
		LeaseExpiresOn: lease(first), ResponseStatus: 201, ResponseBody: `{"stale":true}`, Now: T0.Add(2 * time.Minute)}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("complete by the attempt that lost its lease: err = %v, want ErrNotFound", err)
	}
	if err := s.IdempotencyRelease(ctx, store.IdempotencyReleaseParams{Scope: "POST /api/x", Key: "k1", RequestHash: "h1",
		LeaseExpiresOn: lease(first)}); err != nil {
		t.Fatal(err)
	}
	if busy := begin("k1", "h1", T0.Add(2*time.Minute+time.Second)); busy.Started || busy.Record.Completed {
		t.Fatalf("the stale attempt's release freed the key of the attempt that owns it: %+v", busy)
	}
	done := T0.Add(3 * time.Minute)
	if err := s.IdempotencyComplete(ctx, store.IdempotencyCompleteParams{Scope: "POST /api/x", Key: "k1", RequestHash: "h1",
		LeaseExpiresOn: lease(retry), ResponseStatus: 201, ResponseHeadersJSON: `{"ETag":"\"1\""}`, ResponseBody: `{"guid":"g"}`, Now: done}); err != nil {
		t.Fatal(err)
	}
	got := begin("k1", "h1", T0.Add(time.Hour))
	if got.Started || !got.Record.Completed || got.Record.ResponseStatus != 201 || got.Record.ResponseBody != `{"guid":"g"}` ||
		got.Record.ResponseHeadersJSON != `{"ETag":"\"1\""}` || got.Record.CompletedOn == nil || !got.Record.CompletedOn.Equal(done) {
		t.Fatalf("after complete = %+v", got)
	}
	// Completing twice is refused; releasing a completed record does nothing.
	if err := s.IdempotencyComplete(ctx, store.IdempotencyCompleteParams{Scope: "POST /api/x", Key: "k1", RequestHash: "h1",
		LeaseExpiresOn: lease(retry), ResponseStatus: 500, Now: done}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second complete: err = %v, want ErrNotFound", err)
	}
	if err := s.IdempotencyRelease(ctx, store.IdempotencyReleaseParams{Scope: "POST /api/x", Key: "k1", RequestHash: "h1", LeaseExpiresOn: lease(retry)}); err != nil {
		t.Fatal(err)
	}
	if again := begin("k1", "h1", T0.Add(time.Hour)); !again.Record.Completed {
		t.Fatal("release removed a completed record")
	}

	// Release frees an in-progress key at once (a server error must not pin the key).
	k2 := begin("k2", "h", T0)
	if err := s.IdempotencyRelease(ctx, store.IdempotencyReleaseParams{Scope: "POST /api/x", Key: "k2", RequestHash: "h", LeaseExpiresOn: lease(k2)}); err != nil {
		t.Fatal(err)
	}
	if r := begin("k2", "h", T0.Add(time.Second)); !r.Started {
		t.Fatal("released key was not free")
	}

	// The same key in another scope is another record.
	r, err := s.IdempotencyBegin(ctx, store.IdempotencyBeginParams{Scope: "POST /api/y", Key: "k1", RequestHash: "zz", Now: T0, Lease: time.Minute})
	if err != nil || !r.Started {
		t.Fatalf("other scope: %+v, %v", r, err)
	}

	// Purge is bounded and removes only old records.
	n, err := s.IdempotencyPurge(ctx, T0.Add(time.Hour), 2)
	if err != nil || n != 2 {
		t.Fatalf("purge = %d, %v; want 2 (bounded)", n, err)
	}
	n, err = s.IdempotencyPurge(ctx, T0.Add(time.Hour), 100)
	if err != nil || n != 1 {
		t.Fatalf("second purge = %d, %v; want the 1 left", n, err)
	}
	if _, err := s.IdempotencyPurge(ctx, T0, 0); err == nil {
		t.Fatal("purge with limit 0 must fail")
	}
	if _, err := s.IdempotencyBegin(ctx, store.IdempotencyBeginParams{Scope: "s", Key: "k", RequestHash: "h", Now: T0}); err == nil {
		t.Fatal("begin without a lease must fail")
	}
}

// testIdempotencyConcurrent: of many concurrent first requests with one key, exactly one starts.
func testIdempotencyConcurrent(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	const n = 8
	started := raceWins(t, n, func(int) (bool, error) {
		r, err := s.IdempotencyBegin(ctx, store.IdempotencyBeginParams{Scope: "POST /api/x", Key: "race", RequestHash: "h", Now: T0, Lease: time.Minute})
		return r.Started, err
	})
	if started != 1 {
		t.Fatalf("%d concurrent begins started, want exactly 1", started)
	}
}

// testIdempotencyPurgeKeepsLiveLeases: purge removes records by age, but never an
// in-progress record under a live lease (a request created long ago, crashed, and taken
// over just now is running).
func testIdempotencyPurgeKeepsLiveLeases(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	begin := func(key string, now time.Time) store.IdempotencyBeginResult {
		t.Helper()
		r, err := s.IdempotencyBegin(ctx, store.IdempotencyBeginParams{Scope: "POST /api/x", Key: key, RequestHash: "h", Now: now, Lease: time.Minute})
		if err != nil || !r.Started {
			t.Fatalf("IdempotencyBegin(%s) = %+v, %v", key, r, err)
		}
		return r
	}
	begin("crashed-long-ago", T0)
	begin("taken-over", T0)
	later := T0.Add(48 * time.Hour)
	begin("taken-over", later) // the retry of a request that crashed two days ago runs now
	n, err := s.IdempotencyPurge(ctx, later.Add(-24*time.Hour), 100)
	if err != nil || n != 1 {
		t.Fatalf("purge = %d, %v; want only the abandoned record", n, err)
	}
	if r, err := s.IdempotencyBegin(ctx, store.IdempotencyBeginParams{Scope: "POST /api/x", Key: "taken-over", RequestHash: "h",
		Now: later.Add(time.Second), Lease: time.Minute}); err != nil || r.Started {
		t.Fatalf("the running request's record was purged: %+v, %v", r, err)
	}
}
