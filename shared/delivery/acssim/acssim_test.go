package acssim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/delivery/acssim"
	"github.com/automation-platform/automation/shared/simhttp/simhttptest"
)

// An unsigned request is 401 and sends nothing; bad fault switches are refused.
func TestUnsignedRequestIsRefused(t *testing.T) {
	t.Parallel()
	s := simhttptest.Start(t, acssim.New, acssim.Config{})
	body := `{"from":"+18005550100","smsRecipients":[{"to":"+61412345678"}],"message":"hi"}`
	for _, path := range []string{"/sms?api-version=2021-03-07", "/messages/notifications:send?api-version=2024-08-30"} {
		resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s unsigned: %d, want 401", path, resp.StatusCode)
		}
	}
	if st := s.Stats(); st.Unauthorized != 2 || st.Sent != 0 {
		t.Errorf("stats %+v", st)
	}
	for _, f := range []acssim.Faults{{Mode: "explode"}, {Delay: "soon"}, {RetryAfter: -1}} {
		if err := s.SetFaults(f); err == nil {
			t.Errorf("SetFaults(%+v) accepted", f)
		}
	}
}
