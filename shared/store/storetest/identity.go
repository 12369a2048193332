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

// RunSessions is the SessionStore contract: a session is found by its hash; a touch moves
// LastSeenOn forward only and never on an ended session; the first end is kept; ending a
// principal's sessions ends only its live ones; the purge is bounded and keeps live lifetimes.
func RunSessions(t *testing.T, open Opener) {
	t.Run("ConsoleSessions", func(t *testing.T) {
		t.Parallel()
		s := fresh(t, open)
		ctx := context.Background()
		now := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
		for i, p := range []string{"bootstrap", "bootstrap", "person:ana", "key:pos"} {
			cs := store.ConsoleSession{SessionHash: fmt.Sprintf("%064x", i), Principal: p,
				CreatedOn: now, LastSeenOn: now, ExpiresOn: now.Add(8 * time.Hour)}
			switch i {
			case 2:
				cs.Claims = `{"groups":["g-1"],"roles":["Automation.Read"]}`
			case 3:
				cs.KeyPrefix = "3f9c2a7b1e04"
			}
			if err := s.ConsoleSessionInsert(ctx, cs); err != nil {
				t.Fatal(err)
			}
		}
		h0, h1, h2 := fmt.Sprintf("%064x", 0), fmt.Sprintf("%064x", 1), fmt.Sprintf("%064x", 2)
		if err := s.ConsoleSessionTouch(ctx, h0, now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		_ = s.ConsoleSessionTouch(ctx, h0, now.Add(30*time.Second))
		if cs, err := s.ConsoleSessionGet(ctx, h0); err != nil || !cs.LastSeenOn.Equal(now.Add(time.Minute)) || !cs.ExpiresOn.Equal(now.Add(8*time.Hour)) || cs.Principal != "bootstrap" {
			t.Fatalf("touched: %+v %v", cs, err)
		}
		if err := s.ConsoleSessionEnd(ctx, h0, now.Add(2*time.Minute), "logout"); err != nil {
			t.Fatal(err)
		}
		_ = s.ConsoleSessionEnd(ctx, h0, now.Add(3*time.Minute), "revoked")
		_ = s.ConsoleSessionTouch(ctx, h0, now.Add(4*time.Minute))
		if cs, _ := s.ConsoleSessionGet(ctx, h0); cs.EndedOn == nil || !cs.EndedOn.Equal(now.Add(2*time.Minute)) || cs.EndReason != "logout" || !cs.LastSeenOn.Equal(now.Add(time.Minute)) {
			t.Fatalf("ended: %+v", cs)
		}
		if cs, err := s.ConsoleSessionGet(ctx, fmt.Sprintf("%064x", 2)); err != nil || cs.Claims != `{"groups":["g-1"],"roles":["Automation.Read"]}` || cs.KeyPrefix != "" {
			t.Fatalf("the claims of a person's session: %+v %v", cs, err)
		}
		if cs, err := s.ConsoleSessionGet(ctx, fmt.Sprintf("%064x", 3)); err != nil || cs.KeyPrefix != "3f9c2a7b1e04" || cs.Claims != "" {
			t.Fatalf("the key of a key's session: %+v %v", cs, err)
		}
		if n, err := s.ConsoleSessionEndPrincipal(ctx, "bootstrap", now.Add(5*time.Minute), "revoked"); err != nil || n != 1 {
			t.Fatalf("ending the principal's live sessions: %d %v (want 1: the other one had ended)", n, err)
		}
		if cs, _ := s.ConsoleSessionGet(ctx, h1); cs.EndedOn == nil || cs.EndReason != "revoked" {
			t.Fatalf("the principal's other session: %+v", cs)
		}
		if cs, _ := s.ConsoleSessionGet(ctx, h2); cs.EndedOn != nil {
			t.Fatalf("another principal's session was ended: %+v", cs)
		}
		if _, err := s.ConsoleSessionGet(ctx, fmt.Sprintf("%064x", 9)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown: %v", err)
		}
		if n, err := s.ConsoleSessionPurge(ctx, now.Add(8*time.Hour), 10); err != nil || n != 0 {
			t.Fatalf("purge of live lifetimes: %d %v", n, err)
		}
		if n, err := s.ConsoleSessionPurge(ctx, now.Add(9*time.Hour), 2); err != nil || n != 2 {
			t.Fatalf("bounded purge: %d %v", n, err)
		}
		if _, err := s.ConsoleSessionPurge(ctx, now, store.MaxBatch+1); err == nil {
			t.Fatal("an unbounded purge was accepted")
		}
	})
}
