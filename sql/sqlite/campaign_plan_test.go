package sqlite_test

import (
	"strings"
	"testing"
)

// TestCampaignExecutionListSeeksIndex pins the plan of a campaign's executions list (the
// console's campaign page and GET /api/campaigns/{campaignId}/executions): it must seek
// IX_CampaignExecution_Campaign (migration 0021) on the business unit, the campaign and the
// cursor, and read it in order: no table scan, no sort, so a page costs its own rows. Before
// the index the query scanned CampaignExecution and sorted it.
func TestCampaignExecutionListSeeksIndex(t *testing.T) {
	t.Parallel()
	const want = "USING INDEX IX_CampaignExecution_Campaign (BusinessUnitId=? AND CampaignId=? AND Id<?)"
	plan := planOf(t, "CampaignExecutionList")
	found := false
	for _, line := range plan {
		found = found || (strings.HasPrefix(line, "SEARCH CampaignExecution ") && strings.HasSuffix(line, want))
		if strings.Contains(line, "TEMP B-TREE") || strings.HasPrefix(line, "SCAN ") {
			t.Errorf("CampaignExecutionList scans or sorts: %q", line)
		}
	}
	if !found {
		t.Errorf("CampaignExecutionList does not seek %s\nplan: %q", want, plan)
	}
	t.Logf("CampaignExecutionList: %q", plan)
}
