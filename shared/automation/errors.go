package automation

import (
	"errors"
	"fmt"
	"strings"
)

// ErrorCode is a stable, machine-readable error code. The HTTP layer maps codes to
// statuses in one place; logs and traces carry the code.
type ErrorCode string

// Error codes.
const (
	CodeInvalidInput ErrorCode = "InvalidInput" // bad input: nothing was changed (HTTP 422)
	CodeMalformed    ErrorCode = "Malformed"    // unreadable request: not JSON, unknown field, bad query parameter (HTTP 400)
	CodeNotFound     ErrorCode = "NotFound"     // unknown, or outside the caller's business units (HTTP 404)
	CodeConflict     ErrorCode = "Conflict"     // the state forbids it, or a concurrent change won (HTTP 409)
	CodeLeaseLost    ErrorCode = "LeaseLost"
	CodeInternal     ErrorCode = "Internal"
	// CodePreconditionFailed: If-Match named a Version that is no longer current (HTTP 412).
	CodePreconditionFailed ErrorCode = "PreconditionFailed"
	// CodePreconditionRequired: an update without If-Match (HTTP 428).
	CodePreconditionRequired ErrorCode = "PreconditionRequired"
	// CodeIdempotencyMismatch: an Idempotency-Key reused with a different body (HTTP 422).
	CodeIdempotencyMismatch ErrorCode = "IdempotencyKeyReused"
	// CodeInProgress: a request with the same Idempotency-Key is still running (HTTP 409).
	CodeInProgress ErrorCode = "RequestInProgress"
	// CodeUnauthorized: missing or wrong credentials (HTTP 401).
	CodeUnauthorized ErrorCode = "Unauthorized"
	// CodeForbidden: the credential is known but its roles do not include the one the route
	// needs (HTTP 403). A resource outside the caller's business units is CodeNotFound instead,
	// so ids cannot be probed.
	CodeForbidden ErrorCode = "Forbidden"
	// CodeTooManyRequests: the caller's own quota is used up; the same request may be sent
	// again after Retry-After (HTTP 429). Other callers are not affected.
	CodeTooManyRequests ErrorCode = "TooManyRequests"
	// CodeUnsupportedMediaType: a request body of a media type the route does not take
	// (HTTP 415; strictjson.MediaType).
	CodeUnsupportedMediaType ErrorCode = "UnsupportedMediaType"
	// CodeUnavailable: the service is not taking this request now, and the same request is to
	// be sent again after Retry-After (HTTP 503; for example ingest backpressure). Not a
	// server fault: nothing of the request was done.
	CodeUnavailable ErrorCode = "Unavailable"
)

// Error is a typed error with a stable Code and a human message. Field names the input
// (e.g. "data.expiresOn") when the error is about one. Fields lists one error per invalid
// field when a whole input was validated (see InvalidFields).
type Error struct {
	Code    ErrorCode
	Field   string
	Message string
	Err     error
	Fields  []*Error
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

// Errorf returns an *Error with code and a formatted message.
func Errorf(code ErrorCode, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidFields joins field errors into one CodeInvalidInput error whose Fields lists them
// all (so an API can answer every problem at once). It returns nil for no errors and the
// error itself for one. Errors that are not *Error are wrapped as CodeInvalidInput.
func InvalidFields(errs ...error) error { return JoinFields(CodeInvalidInput, errs...) }

// JoinFields joins field errors into one error with code whose Fields lists them all: nil
// for none, the error itself for one. Errors of another code, or not *Error, become
// fields with code.
func JoinFields(code ErrorCode, errs ...error) error {
	var fields []*Error
	for _, err := range errs {
		if err == nil {
			continue
		}
		var e *Error
		if errors.As(err, &e) && e.Code == code {
			if len(e.Fields) > 0 {
				fields = append(fields, e.Fields...)
			} else {
				fields = append(fields, e)
			}
			continue
		}
		fields = append(fields, &Error{Code: code, Message: err.Error()})
	}
	switch len(fields) {
	case 0:
		return nil
	case 1:
		return fields[0]
	}
	msgs := make([]string, len(fields))
	for i, f := range fields {
		msgs[i] = f.Error()
	}
	return &Error{Code: code, Message: strings.Join(msgs, "; "), Fields: fields}
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

// CodeString is CodeOf as a string, "" for a nil err: the automation.error_code of a failed
// span (telemetry.End).
func CodeString(err error) string {
	if err == nil {
		return ""
	}
	return string(CodeOf(err))
}
