package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// SourceEntityType is the SourceEntityType of every report row (docs/architecture.md#report-subscriptions: SourceEntityGuid is
// the subscription's Guid).
const SourceEntityType = "ReportSubscription"

// Reason codes of report rows (outcomes, not failures).
const (
	ReasonSubscriptionPaused  automation.ReasonCode = "SubscriptionPaused"
	ReasonSubscriptionDeleted automation.ReasonCode = "SubscriptionDeleted"
	// ReasonShadowOnly: the rollout mode keeps the run with the old scheduler; the row is the
	// expected key for the shadow comparison and never acquires ownership.
	ReasonShadowOnly automation.ReasonCode = "ShadowOnly"
	// ReasonSupportRetried: support started a support-retry run in its place.
	ReasonSupportRetried automation.ReasonCode = "SupportRetried"
)

// runKeyHashLen is the number of hex digits of a StorageRunKeyHash (96 bits).
const runKeyHashLen = 24

// StorageRunKeyHash is the short stable hash of a SchedulerKey that names every artifact of
// one run (docs/architecture.md#report-subscriptions): "r" + the first 24 hex digits of its sha256. The blob, the delivery
// coordinates and the support URLs use it.
func StorageRunKeyHash(schedulerKey string) string {
	sum := sha256.Sum256([]byte(schedulerKey))
	return "r" + hex.EncodeToString(sum[:])[:runKeyHashLen]
}

// ValidRunKeyHash reports whether s has the shape of a StorageRunKeyHash.
func ValidRunKeyHash(s string) bool {
	if len(s) != runKeyHashLen+1 || s[0] != 'r' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// SupportRetryKey builds report-subscription:{guid}:support-retry:{retryGuid}: a support
// retry is a new trigger key, so a run that never delivered can run again without touching
// the history of the original row (docs/architecture.md#ensure).
func SupportRetryKey(subscriptionGuid, retryGuid string) (string, error) {
	if !guidRE.MatchString(subscriptionGuid) || !guidRE.MatchString(retryGuid) {
		return "", fmt.Errorf("scheduler key: subscription and retry ids must be GUIDs")
	}
	return automation.ShortenKey("report-subscription:" + strings.ToLower(subscriptionGuid) + ":support-retry:" + strings.ToLower(retryGuid)), nil
}

// ParsedKey is a report SchedulerKey taken apart.
type ParsedKey struct {
	SubscriptionGuid string
	Kind             store.ReportRunKind
	ScheduledOn      time.Time // Scheduled keys only (UTC)
}

// ParseKey reads a report SchedulerKey (docs/architecture.md#scheduler-keys) and checks it is canonical: the key the helpers
// would build for its parts. Errors name "schedulerKey".
func ParseKey(key string) (ParsedKey, error) {
	bad := func(why string) (ParsedKey, error) {
		return ParsedKey{}, automation.Invalid("schedulerKey", "%s: %q", why, key)
	}
	parts := strings.SplitN(key, ":", 4)
	if len(parts) != 4 || parts[0] != "report-subscription" {
		return bad("is not a report-subscription key")
	}
	p := ParsedKey{SubscriptionGuid: parts[1]}
	var canon string
	var err error
	switch parts[2] {
	case "scheduled":
		p.Kind = store.ReportRunScheduled
		t, perr := time.Parse(time.RFC3339, parts[3])
		if perr != nil {
			return bad("the scheduled instant is not RFC 3339")
		}
		p.ScheduledOn = t.UTC()
		canon, err = automation.ReportScheduledKey(p.SubscriptionGuid, p.ScheduledOn)
	case "manual":
		p.Kind = store.ReportRunManual
		canon, err = automation.ReportManualKey(p.SubscriptionGuid, parts[3])
	case "support-retry":
		p.Kind = store.ReportRunSupportRetry
		canon, err = SupportRetryKey(p.SubscriptionGuid, parts[3])
	default:
		return bad("unknown run kind " + parts[2])
	}
	if err != nil || canon != key {
		return bad("is not canonical (lower-case GUIDs, RFC 3339 UTC instant with Z)")
	}
	return p, nil
}
