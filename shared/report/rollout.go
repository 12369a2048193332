package report

import "github.com/automation-platform/automation/shared/store"

// Mode is a rollout stage of the report note (docs/seeds.md#seed-004), set per business unit or per subscription and stored
// in SQL (ReportRollout). A subscription's own mode wins over its business unit's; with
// neither, the mode is Shadow: the old scheduler keeps every run until a subscription is
// put on an allowlist, and removing it from the allowlist (deleting the mode) is the
// rollback.
type Mode string

// Rollout modes, in rollout order.
const (
	// ModeShadow: our rows are created and never executed (Deactivated ShadowOnly at due
	// time); their keys are the expected keys compared with the runs the old scheduler
	// reports through the ownership API. Run-now is refused.
	ModeShadow Mode = "Shadow"
	// ModeRunNowAllowlist: we run manual runs (the old scheduler may not acquire them);
	// scheduled runs stay with the old scheduler, ours are shadow rows.
	ModeRunNowAllowlist Mode = "RunNowAllowlist"
	// ModeScheduledAllowlist: we run manual and scheduled runs. The old scheduler may still
	// acquire scheduled keys; whoever acquires first owns the run, and a conflict puts our
	// row on support hold (watched for conflicts, failures and latency).
	ModeScheduledAllowlist Mode = "ScheduledAllowlist"
	// ModeCutover: we run everything and the old scheduler is guarded out: its acquire is
	// refused for every key of the subscription.
	ModeCutover Mode = "Cutover"
)

// Modes lists the modes in rollout order.
var Modes = []Mode{ModeShadow, ModeRunNowAllowlist, ModeScheduledAllowlist, ModeCutover}

// Valid reports whether m is a known mode.
func (m Mode) Valid() bool {
	for _, x := range Modes {
		if m == x {
			return true
		}
	}
	return false
}

// AutomationRuns reports whether our scheduler executes runs of kind (the kind of the run
// whose ownership is at stake: a support retry counts as the run it retries).
func (m Mode) AutomationRuns(kind store.ReportRunKind) bool {
	switch m {
	case ModeRunNowAllowlist:
		return kind != store.ReportRunScheduled
	case ModeScheduledAllowlist, ModeCutover:
		return true
	}
	return false
}

// OldSchedulerMay reports whether the old scheduler may acquire a run of kind.
func (m Mode) OldSchedulerMay(kind store.ReportRunKind) bool {
	switch m {
	case ModeShadow:
		return true
	case ModeRunNowAllowlist, ModeScheduledAllowlist:
		return kind == store.ReportRunScheduled
	}
	return false
}

// ModeSource says where an effective mode came from.
type ModeSource string

// Mode sources.
const (
	SourceSubscription ModeSource = "subscription"
	SourceBusinessUnit ModeSource = "businessUnit"
	SourceDefault      ModeSource = "default"
)

// EffectiveMode is a subscription's rollout mode and where it came from.
type EffectiveMode struct {
	Mode   Mode       `json:"mode"`
	Source ModeSource `json:"source"`
}
