package automation

import (
	"strings"
	"unicode"
	"unicode/utf16"
)

// Bounds of what a person writes into an audit record (who and why): ResolvedBy and Operator
// columns are nvarchar(200) on SQL Server (200 bytes never undercount their UTF-16 units);
// reasons are bounded in characters, the support actions' rule.
const (
	MaxOperatorBytes = 200
	MaxReasonChars   = 1000
)

// hidden reports the characters an audit line must not carry: control characters and
// bidirectional-text controls (U+202E and friends, which make a line display as another
// text, "Trojan Source"). New lines and tabs are allowed when multiline.
func hidden(r rune, multiline bool) bool {
	if multiline && (r == '\n' || r == '\t') {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// OperatorName cleans a name set by the infrastructure (a header such as
// X-Automation-Operator): trimmed, control and bidirectional-text characters removed, cut to
// MaxOperatorBytes (at a rune boundary). "" means nobody named themselves.
func OperatorName(v string) string {
	v = strings.Map(func(r rune) rune {
		if hidden(r, false) {
			return -1
		}
		return r
	}, strings.TrimSpace(v))
	return Clip(v, MaxOperatorBytes)
}

// Clip returns s cut to at most n bytes at a rune boundary (a rune the cut would split is
// dropped whole, as is any invalid UTF-8 before the cut), for a text bounded by its column or
// record: an error kept as LastError, a reason kept in an index. s already within n is
// returned as it is.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// CheckAudit validates who and why of a person's action, typed by that person (a form
// field, a request body): the operator is required, at most MaxOperatorBytes, without
// control or bidirectional-text characters; the reason is required, at most MaxReasonChars
// characters, without those characters except new lines and tabs. Nothing is cleaned
// silently: the person is told (CodeInvalidInput, 422) and can correct it. Returns both
// trimmed. This is the one rule of the support actions, the fee, delivery and campaign
// resolutions, in the API and in the console.
func CheckAudit(operator, reason string) (string, string, error) {
	operator, reason = strings.TrimSpace(operator), strings.TrimSpace(reason)
	var errs []error
	switch {
	case operator == "":
		errs = append(errs, Invalid("operator", "is required: name yourself (X-Automation-Operator) so the action can be audited"))
	case len(operator) > MaxOperatorBytes:
		errs = append(errs, Invalid("operator", "is longer than %d bytes", MaxOperatorBytes))
	case strings.IndexFunc(operator, func(r rune) bool { return hidden(r, false) }) >= 0:
		errs = append(errs, Invalid("operator", "contains control or bidirectional-text characters"))
	}
	if err := CheckReasonText(reason, true); err != nil {
		errs = append(errs, err)
	}
	if err := InvalidFields(errs...); err != nil {
		return "", "", err
	}
	return operator, reason, nil
}

// CheckReasonText checks an audited reason: at most MaxReasonChars characters, no control
// characters other than new lines and tabs, no bidirectional-text controls; required when
// required. Errors: CodeInvalidInput on field "reason".
func CheckReasonText(reason string, required bool) error {
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "" && required:
		return Invalid("reason", "is required: say why, for the audit")
	case len([]rune(reason)) > MaxReasonChars:
		return Invalid("reason", "is longer than %d characters", MaxReasonChars)
	case strings.IndexFunc(reason, func(r rune) bool { return hidden(r, true) }) >= 0:
		return Invalid("reason", "contains control or bidirectional-text characters")
	}
	return nil
}

// MaxDisplayNameUnits bounds a display name (a business unit's, a reminder setting's, a
// campaign's) in UTF-16 code units, as the SQL Server nvarchar(200) columns count them.
const MaxDisplayNameUnits = 200

// ValidDisplayName reports whether s is a display name: not blank, at most
// MaxDisplayNameUnits UTF-16 code units, and without control or bidirectional-text
// characters (a name is copied into deliveries' payloads, e-mail subjects and the console,
// where U+202E would make it display as another text). The one rule of every display name.
func ValidDisplayName(s string) bool {
	return strings.TrimSpace(s) != "" && len(utf16.Encode([]rune(s))) <= MaxDisplayNameUnits &&
		strings.IndexFunc(s, func(r rune) bool { return hidden(r, false) }) < 0
}
