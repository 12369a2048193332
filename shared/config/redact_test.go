package config_test

import (
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/config"
)

// A refused setting is named, but a value that may carry a credential is never echoed:
// a SAS signature or function key in a URL's query, a password in its user info, or a
// Service Bus connection string pasted into the namespace setting would otherwise reach
// the start-up log (and Application Insights) in clear.
func TestRefusedValuesDoNotEchoCredentials(t *testing.T) {
	t.Parallel()
	const secret = "S3CRETvalue"
	cases := []map[string]string{
		{"AUTOMATION_STORAGE_TABLE_URL": "http://acct.table.core.windows.net/?sv=2022-11-02&sig=" + secret,
			"AUTOMATION_STORAGE_BLOB_URL": "http://acct.blob.core.windows.net/?sv=2022-11-02&sig=" + secret},
		{"AUTOMATION_STORAGE_TABLE_URL": "http://u:" + secret + "@acct.table.core.windows.net/",
			"AUTOMATION_STORAGE_BLOB_URL": "https://acct.blob.core.windows.net/"},
		{"AUTOMATION_SOURCE_URLS": "Staff=http://example.test/list?code=" + secret},
		{"AUTOMATION_SOURCE_URLS": "Staff=ftp://u:" + secret + "@example.test/list"},
		{"AUTOMATION_SOURCE_URLS": "https://example.test/list?code=" + secret},
		{"AUTOMATION_REPORT_SOURCES": "activity=http://example.test/r?sig=" + secret},
		{"AUTOMATION_SERVICEBUS_NAMESPACE": "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=" + secret},
	}
	for _, m := range cases {
		_, err := config.Load(env(m))
		if err == nil {
			t.Errorf("%v accepted", m)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error echoes a credential: %v", err)
		}
		named := false
		for name := range m {
			named = named || strings.Contains(err.Error(), name)
		}
		if !named {
			t.Errorf("the error names none of %v: %v", m, err)
		}
	}
}
