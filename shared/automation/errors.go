package automation

import (
	"errors"
	"fmt"
)

// ErrorCode is a stable, machine-readable error code. The HTTP layer maps codes to
// statuses in one place; logs and traces carry the code.
type ErrorCode string

// Error codes.
const (
	CodeInvalidInput ErrorCode = "InvalidInput" // bad input: nothing was changed
	CodeNotFound     ErrorCode = "NotFound"
	CodeConflict     ErrorCode = "Conflict"
	CodeLeaseLost    ErrorCode = "LeaseLost"
	CodeInternal     ErrorCode = "Internal"
)

// Error is a typed error with a stable Code and a human message. Field names the input
// (e.g. "data.expiresOn") when the error is about one.
type Error struct {
	Code    ErrorCode
	Field   string
	Message string
	Err     error
}

func (e *Error) Error() string {
	msg := e.Message
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Invalid returns a CodeInvalidInput error about field.
func Invalid(field, format string, args ...any) error {
	return &Error{Code: CodeInvalidInput, Field: field, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns err's ErrorCode, or CodeInternal when err carries none.
func CodeOf(err error) ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// IsInvalid reports whether err is bad input (CodeInvalidInput).
func IsInvalid(err error) bool { return err != nil && CodeOf(err) == CodeInvalidInput }
