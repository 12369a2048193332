package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// RunKeys is the KeyStore contract: a key is found by its prefix with what was stored; a
// revocation keeps its first time and operator; an expiry never moves later and leaves a
// revoked key alone; the list pages in prefix order and is bounded.
func RunKeys(t *testing.T, open Opener) {
	t.Run("APIKeys", func(t *testing.T) {
		t.Parallel()
		s := fresh(t, open)
		ctx := context.Background()
		now := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
		for i := range 5 {
			k := store.APIKey{Prefix: fmt.Sprintf("00000000000%d", i), SecretHash: fmt.Sprintf("%064x", i), Name: "pos-sydney",
				Roles: "ingest", BusinessUnits: "bu-a,bu-b", CreatedOn: now, CreatedBy: "cli:ana"}
			if err := s.APIKeyInsert(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		k, err := s.APIKeyGet(ctx, "000000000002")
		if err != nil || k.SecretHash != fmt.Sprintf("%064x", 2) || k.Roles != "ingest" || k.BusinessUnits != "bu-a,bu-b" ||
			!k.CreatedOn.Equal(now) || k.CreatedBy != "cli:ana" || k.ExpiresOn != nil || k.RevokedOn != nil || k.ReplacedBy != "" {
			t.Fatalf("get: %+v %v", k, err)
		}
		if _, err := s.APIKeyGet(ctx, "ffffffffffff"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown prefix: %v", err)
		}
		page, err := s.APIKeyList(ctx, store.APIKeyListParams{After: "000000000001", Limit: 2})
		if err != nil || len(page) != 2 || page[0].Prefix != "000000000002" || page[1].Prefix != "000000000003" {
			t.Fatalf("list: %+v %v", page, err)
		}
		if _, err := s.APIKeyList(ctx, store.APIKeyListParams{Limit: store.MaxBatch + 1}); err == nil {
			t.Fatal("an unbounded list was accepted")
		}
		if err := s.APIKeyRevoke(ctx, "000000000001", now.Add(time.Hour), "key:admin"); err != nil {
			t.Fatal(err)
		}
		if err := s.APIKeyRevoke(ctx, "000000000001", now.Add(2*time.Hour), "someone-else"); err != nil {
			t.Fatal(err)
		}
		if k, _ := s.APIKeyGet(ctx, "000000000001"); k.RevokedOn == nil || !k.RevokedOn.Equal(now.Add(time.Hour)) || k.RevokedBy != "key:admin" {
			t.Fatalf("revoked twice: %+v", k)
		}
		if err := s.APIKeyRevoke(ctx, "ffffffffffff", now, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("revoke unknown: %v", err)
		}
		if err := s.APIKeyExpire(ctx, "000000000003", now.Add(24*time.Hour), "000000000004"); err != nil {
			t.Fatal(err)
		}
		if err := s.APIKeyExpire(ctx, "000000000003", now.Add(48*time.Hour), "000000000009"); err != nil {
			t.Fatal(err)
		}
		if k, _ := s.APIKeyGet(ctx, "000000000003"); k.ExpiresOn == nil || !k.ExpiresOn.Equal(now.Add(24*time.Hour)) || k.ReplacedBy != "000000000004" {
			t.Fatalf("an expiry moved later: %+v", k)
		}
		if err := s.APIKeyExpire(ctx, "000000000001", now.Add(time.Minute), "000000000004"); err != nil {
			t.Fatal(err)
		}
		if k, _ := s.APIKeyGet(ctx, "000000000001"); k.ExpiresOn != nil {
			t.Fatalf("a revoked key was given an expiry: %+v", k)
		}
	})
}
