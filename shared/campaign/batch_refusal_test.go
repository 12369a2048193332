package campaign_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/store"
)

// Every batch handler refuses a batch over store.MaxBatch whole, before it reads anything
// (no store is given here), each message's error naming the handler and what it counts.
func TestBatchHandlersRefuseOversizedBatchesWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	big := make([][]byte, store.MaxBatch+1)
	for i := range big {
		big[i] = []byte(`{}`)
	}
	for _, tc := range []struct {
		name string
		run  func() []error
		want string
	}{
		{"HandleEventBatch", func() []error { _, errs := (&campaign.Dispatcher{}).HandleEventBatch(ctx, big, nil); return errs },
			fmt.Sprintf("campaign dispatcher: a batch of %d events, at most %d", len(big), store.MaxBatch)},
		{"HandleResultBatch", func() []error { return (&campaign.Dispatcher{}).HandleResultBatch(ctx, big, nil) },
			fmt.Sprintf("campaign dispatcher: a batch of %d results, at most %d", len(big), store.MaxBatch)},
		{"Worker.HandleBatch", func() []error { return (&campaign.Worker{}).HandleBatch(ctx, big, nil) },
			fmt.Sprintf("campaign worker: a batch of %d commands, at most %d", len(big), store.MaxBatch)},
		{"Projection.HandleBatch", func() []error { return (&campaign.Projection{}).HandleBatch(ctx, big) },
			fmt.Sprintf("campaign projection: a batch of %d facts, at most %d", len(big), store.MaxBatch)},
	} {
		errs := tc.run()
		if len(errs) != len(big) {
			t.Fatalf("%s: %d errors for %d messages", tc.name, len(errs), len(big))
		}
		for i, err := range errs {
			if err == nil || err.Error() != tc.want {
				t.Fatalf("%s: message %d: %v, want %q", tc.name, i, err, tc.want)
			}
		}
	}
}
