package providersim

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

func call(t *testing.T, url, key string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/actions", bytes.NewReader([]byte(`{}`)))
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /actions %s: %v %v", key, resp, err)
	}
	resp.Body.Close()
}

// lookup returns the status of GET /actions/{key}, or 0 when the answer was lost.
func lookup(url, key string) int {
	resp, err := http.Get(url + "/actions/" + key)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestLookupFaults: lookupFailPercent answers 503 and lookupLosePercent closes the
// connection unanswered, whatever the call mode, without changing what was applied; the
// draws are deterministic per key and lookup number; with both 0 a lookup answers.
func TestLookupFaults(t *testing.T) {
	s := New(Config{Lookup: true})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	call(t, ts.URL, "k1")
	if got := lookup(ts.URL, "k1"); got != http.StatusOK {
		t.Fatalf("no lookup fault: %d, want 200", got)
	}
	if err := s.SetFaults(Faults{LookupFailPercent: 100}); err != nil {
		t.Fatal(err)
	}
	if got := lookup(ts.URL, "k1"); got != http.StatusServiceUnavailable {
		t.Fatalf("lookupFailPercent 100: %d, want 503", got)
	}
	if err := s.SetFaults(Faults{Mode: ModeFlaky, LookupLosePercent: 100}); err != nil {
		t.Fatal(err)
	}
	if got := lookup(ts.URL, "k1"); got != 0 {
		t.Fatalf("lookupLosePercent 100: %d, want no answer", got)
	}
	st := s.Stats()
	if st.Lookups != 3 || st.LookupFailed != 1 || st.LookupLost != 1 || s.Applied("k1") != 1 || st.Applied != 1 {
		t.Fatalf("stats %+v applied %d, want 3 lookups, 1 failed, 1 lost, k1 applied once", st, s.Applied("k1"))
	}
	// A share: the same keys and lookup numbers draw the same faults on a fresh server.
	draws := func() string {
		s := New(Config{Lookup: true})
		if err := s.SetFaults(Faults{LookupFailPercent: 30, LookupLosePercent: 20}); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for i := 0; i < 40; i++ {
			fmt.Fprint(&b, s.decideLookup(fmt.Sprintf("key-%d", i%10)), ",")
		}
		st := s.Stats()
		if st.LookupFailed == 0 || st.LookupLost == 0 || st.LookupFailed+st.LookupLost == 40 {
			t.Fatalf("30 %% fail and 20 %% lose over 40 lookups drew %+v", st)
		}
		return b.String()
	}
	if a, b := draws(), draws(); a != b {
		t.Fatalf("lookup draws differ between runs:\n%s\n%s", a, b)
	}
}

// TestLookupFaultsValidated: negative shares and a sum above 100 are refused (nothing changes).
func TestLookupFaultsValidated(t *testing.T) {
	s := New(Config{Lookup: true})
	for _, f := range []Faults{{LookupFailPercent: -1}, {LookupLosePercent: -5}, {LookupFailPercent: 60, LookupLosePercent: 41}} {
		if err := s.SetFaults(f); err == nil {
			t.Errorf("%+v accepted", f)
		}
	}
	if err := s.SetFaults(Faults{LookupFailPercent: 60, LookupLosePercent: 40}); err != nil {
		t.Errorf("60 + 40: %v", err)
	}
}
