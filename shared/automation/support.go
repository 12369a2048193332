package automation

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// ReasonSupportCancelled is the ReasonCode of a row an operator cancelled through the
// support API. Such a row stays Cancelled when ensure meets it again with the same InputHash
// (DecideEnsure): the operator's decision sticks until the occurrence itself changes.
const ReasonSupportCancelled ReasonCode = "SupportCancelled"

// supportRetrySep starts the suffix of a support-retry key. ':' separates key components and
// no component of a reminder or report key can be "support-retry" followed by "v<digits>"
// at the end, so a support-retry key never equals a trigger key.
const supportRetrySep = ":support-retry:v"

// SupportRetryKey returns the SchedulerKey of a support retry of the row with key original,
// made when that row was at Version version (docs/architecture.md#ensure: "a real resend needs a new
// trigger key or a support-retry key"):
//
//	{original}:support-retry:v{version}
//
// The retry row is a new row, so its deliveries get new delivery keys (delivery.Key is
// derived from the SchedulerKey) and the original delivery key is never reused; the version
// makes it deterministic (retrying the same read twice names the same row) and distinct per
// retry (each retry moves the original's Version on). When the result would be longer than
// MaxSchedulerKeyLength, the original part is shortened like ShortenKey does (a prefix, then
// "#sha256=" and the hash of the whole original), so the suffix always survives.
func SupportRetryKey(original string, version int64) string {
	suffix := supportRetrySep + strconv.FormatInt(version, 10)
	if len(original)+len(suffix) <= MaxSchedulerKeyLength {
		return original + suffix
	}
	sum := sha256.Sum256([]byte(original))
	hash := keyHashSep + hex.EncodeToString(sum[:])
	keep := MaxSchedulerKeyLength - len(suffix) - len(hash)
	return original[:keep] + hash + suffix
}

// SupportRetryVersion reports whether key is a support-retry key and, if so, the Version
// its original row had when it was retried.
func SupportRetryVersion(key string) (version int64, ok bool) {
	i := strings.LastIndex(key, supportRetrySep)
	if i < 0 {
		return 0, false
	}
	digits := key[i+len(supportRetrySep):]
	if digits == "" || len(digits) > 19 || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// IsSupportRetryOf reports whether key is a support-retry key of the row with key original:
// SupportRetryKey(original, v) for the version v that key names, or a support retry of such
// a retry (at most 8 levels). Revalidation uses it to recognise a retry row's occurrence
// among the ones the source and setting produce now.
func IsSupportRetryOf(key, original string) bool {
	for level := 0; level < 8; level++ {
		v, ok := SupportRetryVersion(key)
		if !ok {
			return false
		}
		if SupportRetryKey(original, v) == key {
			return true
		}
		key = key[:strings.LastIndex(key, supportRetrySep)] // one level down (a shortened key stops matching)
	}
	return false
}
