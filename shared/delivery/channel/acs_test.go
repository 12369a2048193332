package channel_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/delivery/channel"
)

// The vectors of Microsoft's own HMAC tests for ACS (azure-sdk-for-python,
// sdk/communication/azure-communication-identity/tests/test_hmac.py): access key "pw==",
// host contoso.communicationservices.azure.com, x-ms-date "Wed, 13 Apr 2022 18:09:12 GMT",
// GET with an empty body. They fix the string to sign, the key decoding, the content hash
// and the header format independently of our simulator.
func TestACSSignMicrosoftVectors(t *testing.T) {
	t.Parallel()
	conn, err := channel.ParseACSConnectionString("endpoint=https://contoso.communicationservices.azure.com/;accesskey=pw==")
	if err != nil {
		t.Fatal(err)
	}
	if conn.Endpoint != "https://contoso.communicationservices.azure.com" {
		t.Fatalf("endpoint %q", conn.Endpoint)
	}
	date := time.Date(2022, 4, 13, 18, 9, 12, 0, time.UTC)
	for _, c := range []struct{ url, want string }{
		{"https://contoso.communicationservices.azure.com/", "88MDmJhUR3m5QhFxb8ztShsSwlGrg7g/6XPnWf7QEO4="},
		{"https://contoso.communicationservices.azure.com/testPath", "RoCrHjw7fb9fpHSbqvRUY2xa8RBS0YvI1cxI1x8AS38="},
		{"https://contoso.communicationservices.azure.com/testPath?testQuery=yes", "il99+rd6V5O136roX/zVePCNle78HmvC4B7tu9zRH3I="},
	} {
		req, _ := http.NewRequest(http.MethodGet, c.url, http.NoBody)
		channel.ACSSign(req, nil, conn.AccessKey, date)
		if got, want := req.Header.Get("Authorization"), channel.ACSAuthorization(c.want); got != want {
			t.Errorf("%s: Authorization %q, want %q", c.url, got, want)
		}
		if d := req.Header.Get("x-ms-date"); d != "Wed, 13 Apr 2022 18:09:12 GMT" {
			t.Errorf("x-ms-date %q", d)
		}
		if h := req.Header.Get("x-ms-content-sha256"); h != "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" {
			t.Errorf("x-ms-content-sha256 of an empty body %q", h)
		}
	}
	for _, bad := range []string{"accesskey=pw==", "endpoint=https://x.example/;accesskey=not base64!", "endpoint=ftp://x/;accesskey=pw=="} {
		if _, err := channel.ParseACSConnectionString(bad); err == nil {
			t.Errorf("ParseACSConnectionString(%q) accepted", bad)
		}
	}
}
