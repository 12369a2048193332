package fcmsim_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/delivery/fcmsim"
	"github.com/automation-platform/automation/shared/simhttp/simhttptest"
)

// A send without an issued access token is 401 and accepts nothing; a token request with
// another grant or a forged assertion is refused.
func TestAuthRefusals(t *testing.T) {
	t.Parallel()
	s := simhttptest.Start(t, fcmsim.New, fcmsim.Config{})
	body := `{"message":{"token":"tok-1","notification":{"title":"t","body":"b"}}}`
	for _, auth := range []string{"", "Bearer ya29.made-up"} {
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/projects/sim-project/messages:send", strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("auth %q: %d, want 401", auth, resp.StatusCode)
		}
	}
	for _, form := range []url.Values{
		{"grant_type": {"client_credentials"}},
		{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {"eyJhbGciOiJSUzI1NiJ9.e30.c2ln"}},
	} {
		resp, err := http.PostForm(s.URL()+"/token", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("token %v: %d, want 400", form, resp.StatusCode)
		}
	}
	if st := s.Stats(); st.Unauthorized != 2 || st.Refused != 2 || st.Accepted != 0 || st.Tokens != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestFaultsAreChecked(t *testing.T) {
	t.Parallel()
	s, err := fcmsim.New(fcmsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []fcmsim.Faults{{Mode: "explode"}, {Delay: "soon"}, {Tokens: map[string]string{"t": "nope"}}, {RetryAfter: -1}} {
		if err := s.SetFaults(f); err == nil {
			t.Errorf("SetFaults(%+v) accepted", f)
		}
	}
}
