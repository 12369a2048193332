package automation

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// MaxSchedulerKeyLength is the SchedulerKey column width in characters. Longer keys are
// shortened by ShortenKey, never silently truncated.
const MaxSchedulerKeyLength = 400

// keyHashSep separates the kept prefix of an over-long key from its hash suffix. It cannot
// appear in a key component, so a shortened key never equals an unshortened one.
const keyHashSep = "#sha256="

var (
	guidRE      = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	dateRE      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	componentRE = regexp.MustCompile(`^[A-Za-z0-9._~@+/-]+$`)
)

// MaxKeyOffsetDays bounds the offset component of a date-based key either way (ten years of
// days; the reminder settings' own bound is the same).
const MaxKeyOffsetDays = 3650

// ReminderDateKey builds the key of one date-based reminder occurrence (docs/architecture.md#scheduler-keys):
//
//	reminder:{settingGuid}:{sourceType}:{sourceGuid}:{triggerKey}:{targetDate}:{offsetDays}
//
// settingGuid must be a GUID (written lower-case); sourceGuid is lower-cased when it is a
// GUID; targetDate is "YYYY-MM-DD"; offsetDays is the days before the target (negative:
// after it, written "-90"; within ±MaxKeyOffsetDays). Components may not contain ':' or
// white space. Errors name the offending component.
func ReminderDateKey(settingGuid, sourceType, sourceGuid, triggerKey, targetDate string, offsetDays int) (string, error) {
	g, err := canonGUID("settingGuid", settingGuid)
	if err != nil {
		return "", err
	}
	if !dateRE.MatchString(targetDate) {
		return "", fmt.Errorf("scheduler key: targetDate %q is not YYYY-MM-DD", targetDate)
	}
	if offsetDays < -MaxKeyOffsetDays || offsetDays > MaxKeyOffsetDays {
		return "", fmt.Errorf("scheduler key: offsetDays %d is outside ±%d", offsetDays, MaxKeyOffsetDays)
	}
	parts, err := components(map[string]string{"sourceType": sourceType, "sourceGuid": sourceGuid, "triggerKey": triggerKey},
		"sourceType", "sourceGuid", "triggerKey")
	if err != nil {
		return "", err
	}
	return ShortenKey("reminder:" + g + ":" + parts + ":" + targetDate + ":" + strconv.Itoa(offsetDays)), nil
}

// ThresholdKey builds thresholdKey = {metricKey}:{thresholdValue}:{firingPolicy}:{scopeKey}
// (docs/architecture.md#scheduler-keys, docs/architecture.md#threshold-reminders). thresholdValue is written without trailing zeros ("0.9", "100");
// pass "any" as valueText for OncePerSource by using ThresholdKeyAny.
func ThresholdKey(metricKey string, thresholdValue float64, firingPolicy, scopeKey string) (string, error) {
	return thresholdKey(metricKey, strconv.FormatFloat(thresholdValue, 'f', -1, 64), firingPolicy, scopeKey)
}

// ThresholdKeyAny is ThresholdKey with the value "any" (firing policy OncePerSource).
func ThresholdKeyAny(metricKey, firingPolicy, scopeKey string) (string, error) {
	return thresholdKey(metricKey, "any", firingPolicy, scopeKey)
}

func thresholdKey(metricKey, value, policy, scope string) (string, error) {
	parts, err := components(map[string]string{"metricKey": metricKey}, "metricKey")
	if err != nil {
		return "", err
	}
	rest, err := components(map[string]string{"firingPolicy": policy, "scopeKey": scope}, "firingPolicy", "scopeKey")
	if err != nil {
		return "", err
	}
	return parts + ":" + value + ":" + rest, nil
}

// ReminderThresholdKey builds the key of one threshold reminder firing (docs/architecture.md#scheduler-keys):
//
//	reminder:{settingGuid}:{sourceType}:{sourceGuid}:{triggerKey}:threshold:{thresholdKey}
func ReminderThresholdKey(settingGuid, sourceType, sourceGuid, triggerKey, thresholdKey string) (string, error) {
	g, err := canonGUID("settingGuid", settingGuid)
	if err != nil {
		return "", err
	}
	parts, err := components(map[string]string{"sourceType": sourceType, "sourceGuid": sourceGuid, "triggerKey": triggerKey},
		"sourceType", "sourceGuid", "triggerKey")
	if err != nil {
		return "", err
	}
	if thresholdKey == "" || strings.ContainsAny(thresholdKey, " \t\r\n") {
		return "", fmt.Errorf("scheduler key: thresholdKey %q is empty or has white space", thresholdKey)
	}
	return ShortenKey("reminder:" + g + ":" + parts + ":threshold:" + thresholdKey), nil
}

// ReportScheduledKey builds report-subscription:{guid}:scheduled:{periodStartUtc} (docs/architecture.md#scheduler-keys).
// periodStart is written as RFC 3339 UTC with "Z" at second precision.
func ReportScheduledKey(subscriptionGuid string, periodStart time.Time) (string, error) {
	g, err := canonGUID("subscriptionGuid", subscriptionGuid)
	if err != nil {
		return "", err
	}
	return ShortenKey("report-subscription:" + g + ":scheduled:" + periodStart.UTC().Format(time.RFC3339)), nil
}

// ReportManualKey builds report-subscription:{guid}:manual:{manualRunGuid} (docs/architecture.md#scheduler-keys). The
// manualRunGuid is generated once by run-now and reused on retry.
func ReportManualKey(subscriptionGuid, manualRunGuid string) (string, error) {
	g, err := canonGUID("subscriptionGuid", subscriptionGuid)
	if err != nil {
		return "", err
	}
	m, err := canonGUID("manualRunGuid", manualRunGuid)
	if err != nil {
		return "", err
	}
	return ShortenKey("report-subscription:" + g + ":manual:" + m), nil
}

// ShortenKey returns key unchanged when it fits MaxSchedulerKeyLength. A longer key keeps
// its first characters and ends with "#sha256=" + the 64 hex digits of the sha256 of the
// whole key, exactly MaxSchedulerKeyLength long: stable, collision-resistant, and visibly
// shortened.
func ShortenKey(key string) string {
	if len(key) <= MaxSchedulerKeyLength {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	suffix := keyHashSep + hex.EncodeToString(sum[:])
	return key[:MaxSchedulerKeyLength-len(suffix)] + suffix
}

// InputHash is the lower-case hex sha256 of the canonical JSON of input (docs/architecture.md#the-row): the
// candidate's canonical input plus the settings that affect its key. input must be a
// struct or map whose JSON encoding is deterministic (encoding/json sorts map keys).
func InputHash(input any) string {
	b, err := json.Marshal(input)
	if err != nil {
		// Only unsupported types (channels, funcs) fail; that is a programming error.
		panic(fmt.Sprintf("automation.InputHash: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func canonGUID(name, v string) (string, error) {
	if !guidRE.MatchString(v) {
		return "", fmt.Errorf("scheduler key: %s %q is not a GUID", name, v)
	}
	return strings.ToLower(v), nil
}

// components validates the named values and joins them with ':' in the order given.
func components(values map[string]string, order ...string) (string, error) {
	out := make([]string, 0, len(order))
	for _, name := range order {
		v := values[name]
		if !componentRE.MatchString(v) {
			return "", fmt.Errorf("scheduler key: %s %q must be non-empty and use only letters, digits and ._~@+/-", name, v)
		}
		if guidRE.MatchString(v) {
			v = strings.ToLower(v)
		}
		out = append(out, v)
	}
	return strings.Join(out, ":"), nil
}
