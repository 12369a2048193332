package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
)

// ETag returns the strong entity tag of a resource at Version version: the decimal
// version in quotes, e.g. `"7"`.
func ETag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }

// SetETag sets the ETag header for version.
func SetETag(w http.ResponseWriter, version int64) { w.Header().Set("ETag", ETag(version)) }

// IfMatch returns the Version named by the request's If-Match header (RFC 9110 section 13.1.1;
// one strong tag as written by ETag). Errors: CodePreconditionRequired when the header is
// missing and required; CodeMalformed for "*", weak tags, lists (also as several header
// lines) or anything not written by ETag (such as "007" for version 7). ok is false when
// the header is absent and not required; CodePreconditionFailed (412) for "0", which no
// resource ever is at (versions start at 1), so a handler never passes 0 to a store as if
// it were a version read.
func IfMatch(r *http.Request, required bool) (version int64, ok bool, err error) {
	// Several If-Match lines are one comma-separated list (RFC 9110 section 5.3): refused below.
	raw := strings.TrimSpace(strings.Join(r.Header.Values("If-Match"), ", "))
	if raw == "" {
		if required {
			return 0, false, &automation.Error{Code: automation.CodePreconditionRequired, Field: "If-Match",
				Message: "send If-Match with the ETag of the version you read"}
		}
		return 0, false, nil
	}
	bad := &automation.Error{Code: automation.CodeMalformed, Field: "If-Match",
		Message: "must be one strong entity tag as returned in ETag, e.g. \"3\""}
	if len(raw) < 3 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return 0, false, bad
	}
	inner := raw[1 : len(raw)-1]
	v, perr := strconv.ParseInt(inner, 10, 64)
	if perr != nil || v < 0 || strconv.FormatInt(v, 10) != inner { // only tags ETag writes: not "007", "+7"
		return 0, false, bad
	}
	if v == 0 { // versions start at 1: no resource is ever at "0", and a store must never read 0 as "unguarded"
		return 0, false, &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match",
			Message: "no resource is at version \"0\" (versions start at 1); read it and send its ETag"}
	}
	return v, true, nil
}

// CheckVersion returns CodePreconditionFailed when the If-Match version (when given)
// differs from current.
func CheckVersion(ifMatch int64, given bool, current int64) error {
	if given && ifMatch != current {
		return &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match",
			Message: "the resource is at version " + ETag(current) + ", not " + ETag(ifMatch) + "; read it again"}
	}
	return nil
}
