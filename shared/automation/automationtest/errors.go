package automationtest

import (
	"errors"

	"github.com/automation-platform/automation/shared/automation"
)

// NamesField reports whether err is (or wraps) an automation.Error that names field: as its
// own Field or as one of its Fields (the members automation.JoinFields gathers). A nil err
// names nothing.
func NamesField(err error, field string) bool {
	var e *automation.Error
	if !errors.As(err, &e) {
		return false
	}
	if e.Field == field {
		return true
	}
	for _, f := range e.Fields {
		if f.Field == field {
			return true
		}
	}
	return false
}

// FieldOf is the member err's automation.Error names ("" when err is not one, or names none).
func FieldOf(err error) string {
	var e *automation.Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}
