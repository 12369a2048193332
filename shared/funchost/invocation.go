package funchost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// InvocationIDHeader carries the host's invocation id on every request (docs/functions-protocol.md#wire-shape).
const InvocationIDHeader = "X-Azure-Functions-InvocationId"

// InvocationRequest is the body of POST /{FunctionName}: Data holds trigger and input
// binding values keyed by binding name, Metadata the trigger's binding data plus "sys".
type InvocationRequest struct {
	Data     map[string]json.RawMessage
	Metadata map[string]json.RawMessage
}

// InvocationResponse is the reply to an invocation. Outputs is keyed by output binding
// name; each Logs entry is logged by the host at Information level; ReturnValue goes to a
// $return binding. The router always sends Outputs as an object and Logs as an array.
type InvocationResponse struct {
	Outputs     map[string]any
	Logs        []string
	ReturnValue any
}

// DecodeInvocationRequest parses an invocation body. The body must be one JSON object;
// missing Data or Metadata become empty maps.
func DecodeInvocationRequest(body []byte) (*InvocationRequest, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, errors.New("empty invocation body")
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("invocation body must be a JSON object, got %s", jsonKind(trimmed))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var req InvocationRequest
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("invalid invocation JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid invocation JSON: data after the top-level object")
	}
	if req.Data == nil {
		req.Data = map[string]json.RawMessage{}
	}
	if req.Metadata == nil {
		req.Metadata = map[string]json.RawMessage{}
	}
	return &req, nil
}

// Invocation is one call of a non-HTTP function as a handler sees it.
type Invocation struct {
	FunctionName string // the registered function name
	InvocationID string // X-Azure-Functions-InvocationId, "" when absent
	Request      *InvocationRequest
}

// Timer decodes the timer trigger binding named binding ("timer" in our function.json).
func (inv *Invocation) Timer(binding string) (*TimerInfo, error) {
	return DecodeTimer(inv.Request, binding)
}

// ServiceBus decodes the Service Bus trigger binding named binding ("message" in our
// function.json) declared with the default dataType (string).
func (inv *Invocation) ServiceBus(binding string) (*ServiceBusMessage, error) {
	return DecodeServiceBus(inv.Request, binding, nil)
}

// ServiceBusBinary decodes a Service Bus trigger binding declared with
// "dataType": "binary": the body arrives base64-encoded.
func (inv *Invocation) ServiceBusBinary(binding string) (*ServiceBusMessage, error) {
	return DecodeServiceBus(inv.Request, binding, &ServiceBusOptions{DataType: DataTypeBinary})
}

// Result is what a handler returns on success (and, with a permanent error, the logs it
// wants kept). Outputs values that are strings are base64-decoded by the host when they
// happen to be valid base64 (docs/functions-protocol.md#wire-shape "Response payload"): send objects instead.
type Result struct {
	Outputs     map[string]any
	Logs        []string
	ReturnValue any
}

// ErrBindingNotFound is the cause of a DecodeError when Data has no entry for the binding.
var ErrBindingNotFound = errors.New("binding not present in invocation Data")

// DecodeError reports a malformed or missing trigger value. Binding is the binding name;
// Field locates the value, e.g. "Data.message", "Metadata.DeliveryCount" or
// "Data.timer.ScheduleStatus.Next".
type DecodeError struct {
	Binding string
	Field   string
	Err     error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("funchost: binding %q: %s: %v", e.Binding, e.Field, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// lookupKey finds key in m exactly, then case-insensitively (the first match in sorted
// key order, so the result is deterministic).
func lookupKey(m map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	var keys []string
	for k := range m {
		if strings.EqualFold(k, key) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, false
	}
	sort.Strings(keys)
	return m[keys[0]], true
}
