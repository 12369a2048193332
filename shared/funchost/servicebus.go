package funchost

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// DataType is a binding's "dataType" in function.json.
type DataType string

// Data types a Service Bus trigger can declare. An empty DataType means string, the
// default for script functions (docs/functions-protocol.md#service-bus-trigger "Default trigger type").
const (
	DataTypeString DataType = "string"
	DataTypeBinary DataType = "binary"
)

// Metadata keys read for a Service Bus trigger (cardinality "one"), as named by the
// Service Bus extension's binding data (docs/functions-protocol.md#service-bus-trigger "Invocation payload").
const (
	MetaMessageID             = "MessageId"
	MetaSessionID             = "SessionId"
	MetaCorrelationID         = "CorrelationId"
	MetaContentType           = "ContentType"
	MetaDeliveryCount         = "DeliveryCount"
	MetaEnqueuedTimeUtc       = "EnqueuedTimeUtc"
	MetaEnqueuedTime          = "EnqueuedTime" // alias of EnqueuedTimeUtc (DateTimeOffset)
	MetaApplicationProperties = "ApplicationProperties"
	MetaUserProperties        = "UserProperties" // alias of ApplicationProperties
)

// ServiceBusOptions configures DecodeServiceBus; nil means defaults.
type ServiceBusOptions struct {
	// DataType is the trigger binding's declared dataType: "" or DataTypeString, or
	// DataTypeBinary (body sent as base64).
	DataType DataType
}

// ServiceBusMessage is a Service Bus trigger invocation (cardinality "one").
type ServiceBusMessage struct {
	Body          []byte
	MessageID     string
	SessionID     string
	CorrelationID string
	ContentType   string
	// DeliveryCount is 1 on the first delivery; 0 means unknown (absent or shadowed).
	DeliveryCount   int
	EnqueuedTimeUtc time.Time
	// ApplicationProperties holds the message's application properties; numbers are
	// json.Number.
	ApplicationProperties map[string]any
	// Shadowed lists the Metadata keys (MessageId, …) whose value may have been overwritten
	// by a same-named top-level field of the JSON body and could not be recovered from an
	// alias; the matching field holds its zero value. Read the value from your own body
	// field instead (docs/functions-protocol.md#pitfalls last bullet).
	Shadowed []string
}

// metaString is a string member of a message with its Metadata key: key for a single
// message, arrayKey for a batch (one value per message).
type metaString struct {
	key, arrayKey string
	dst           *string
}

// metaStrings lists m's string members read from Metadata (MessageId, SessionId,
// CorrelationId, ContentType), in that order, for a single message and a batch alike.
func (m *ServiceBusMessage) metaStrings() [4]metaString {
	return [4]metaString{
		{MetaMessageID, MetaMessageIDArray, &m.MessageID},
		{MetaSessionID, MetaSessionIDArray, &m.SessionID},
		{MetaCorrelationID, MetaCorrelationIDArray, &m.CorrelationID},
		{MetaContentType, MetaContentTypeArray, &m.ContentType},
	}
}

// DecodeServiceBus decodes the Service Bus trigger binding named binding from req. See
// the package documentation for the exact keys read, the encodings accepted and how body
// fields that shadow Metadata keys are handled.
func DecodeServiceBus(req *InvocationRequest, binding string, opts *ServiceBusOptions) (*ServiceBusMessage, error) {
	raw, dt, err := bindingValue(req, binding, opts)
	if err != nil {
		return nil, err
	}
	body, err := decodeBody(raw, dt, true)
	if err != nil {
		return nil, &DecodeError{Binding: binding, Field: "Data." + binding, Err: err}
	}
	d := &sbDecoder{binding: binding, meta: req.Metadata}
	if dt != DataTypeBinary {
		// The host only copies body fields into Metadata for string trigger values.
		d.body = scanBodyFields(body)
	}
	msg := &ServiceBusMessage{Body: body}
	for _, f := range msg.metaStrings() {
		if *f.dst, err = d.str(f.key); err != nil {
			return nil, err
		}
	}
	if msg.DeliveryCount, err = d.deliveryCount(); err != nil {
		return nil, err
	}
	if msg.EnqueuedTimeUtc, err = d.enqueuedTime(); err != nil {
		return nil, err
	}
	if msg.ApplicationProperties, err = d.properties(); err != nil {
		return nil, err
	}
	msg.Shadowed = d.shadowed
	return msg, nil
}

// decodeBody extracts the message body from its Data value. twice: the value is a single
// message's, which the host serializes once more (a string body arrives as a JSON string
// holding a JSON string literal), so one more level of string encoding is removed when
// present; a batch's element is encoded once (JsonConvert.SerializeObject of the string[]),
// so twice is false and a body that is itself a JSON string literal stays as it is.
func decodeBody(raw json.RawMessage, dt DataType, twice bool) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, errors.New("body is null")
	}
	switch raw[0] {
	case '{', '[':
		if !json.Valid(raw) {
			return nil, fmt.Errorf("invalid JSON %s", strings.TrimPrefix(jsonKind(raw), "an "))
		}
		return append([]byte(nil), raw...), nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("invalid JSON string: %w", err)
		}
		// A single message's string body is JsonConvert-serialized once more, so s is
		// usually a JSON string literal; base64 has no quotes, so unwrapping is safe for
		// binary too.
		if twice {
			s = unwrapString(s)
		}
		if dt == DataTypeBinary {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("dataType binary: invalid base64: %w", err)
			}
			return b, nil
		}
		return []byte(s), nil
	default:
		return nil, fmt.Errorf("expected a JSON string, object or array, got %s", jsonKind(raw))
	}
}

// bodyFields holds the top-level fields of a JSON-object body that the host would have
// copied into Metadata: non-null, non-array values (Utility.ApplyBindingData).
type bodyFields struct {
	fields map[string][]json.RawMessage // lower-cased name → values
	// unparsed is the lower-cased body when it looks like an object ({…}) but does not
	// parse here; the host's more lenient parser might still have read it, so any key
	// name occurring in it counts as possibly shadowed.
	unparsed string
}

func scanBodyFields(body []byte) bodyFields {
	t := bytes.TrimSpace(body)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return bodyFields{}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t, &m); err != nil {
		return bodyFields{unparsed: strings.ToLower(string(t))}
	}
	f := bodyFields{fields: map[string][]json.RawMessage{}}
	for k, v := range m {
		v = bytes.TrimSpace(v)
		if isNull(v) || v[0] == '[' {
			continue
		}
		lk := strings.ToLower(k)
		f.fields[lk] = append(f.fields[lk], v)
	}
	return f
}

// mayShadow reports whether a body field named like key (case-insensitively) may have
// overwritten Metadata[key].
func (b bodyFields) mayShadow(key string) bool {
	lk := strings.ToLower(key)
	if b.unparsed != "" {
		return strings.Contains(b.unparsed, lk)
	}
	return len(b.fields[lk]) > 0
}

// provablyNotFromBody reports whether the Metadata string value got for key cannot have
// come from the body: every same-named body field is a plain JSON string different from
// got. Non-string fields are converted by the host (numbers, booleans, and ISO-8601 strings,
// which its JSON parser turns into dates and back into a differently formatted string), so
// they prove nothing.
func (b bodyFields) provablyNotFromBody(key, got string) bool {
	if b.unparsed != "" {
		return false
	}
	for _, v := range b.fields[strings.ToLower(key)] {
		if v[0] != '"' {
			return false
		}
		var s string
		if json.Unmarshal(v, &s) != nil || s == got || looksLikeDate(s) {
			return false
		}
	}
	return true
}

// looksLikeDate reports whether Newtonsoft's default date handling could rewrite s:
// ISO-8601 dates (yyyy-MM-dd…) and Microsoft "/Date(…)/" strings.
func looksLikeDate(s string) bool {
	if strings.HasPrefix(s, "/Date(") {
		return true
	}
	if len(s) < 10 {
		return false
	}
	for i, c := range s[:10] {
		switch i {
		case 4, 7:
			if c != '-' {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

type sbDecoder struct {
	binding  string
	meta     map[string]json.RawMessage
	body     bodyFields
	shadowed []string
}

func (d *sbDecoder) fail(key string, err error) error {
	return &DecodeError{Binding: d.binding, Field: "Metadata." + key, Err: err}
}

// str resolves a string key.
func (d *sbDecoder) str(key string) (string, error) {
	raw, ok := lookupKey(d.meta, key)
	if !ok {
		return "", nil
	}
	s, _, err := scalarText(raw)
	if !d.body.mayShadow(key) {
		if err != nil {
			return "", d.fail(key, err)
		}
		return s, nil
	}
	if err == nil && d.body.provablyNotFromBody(key, s) {
		return s, nil
	}
	d.shadowed = append(d.shadowed, key)
	return "", nil
}

func (d *sbDecoder) deliveryCount() (int, error) {
	raw, ok := lookupKey(d.meta, MetaDeliveryCount)
	if !ok {
		return 0, nil
	}
	if d.body.mayShadow(MetaDeliveryCount) {
		d.shadowed = append(d.shadowed, MetaDeliveryCount)
		return 0, nil
	}
	n, _, err := parseInt(raw)
	if err != nil {
		return 0, d.fail(MetaDeliveryCount, err)
	}
	if n < 0 || n > 1<<31-1 {
		return 0, d.fail(MetaDeliveryCount, fmt.Errorf("out of range: %d", n))
	}
	return int(n), nil
}

// enqueuedTime reads EnqueuedTimeUtc, falling back to EnqueuedTime.
func (d *sbDecoder) enqueuedTime() (time.Time, error) {
	return firstUnshadowed(d, []string{MetaEnqueuedTimeUtc, MetaEnqueuedTime}, parseTime)
}

// properties reads ApplicationProperties, falling back to UserProperties.
func (d *sbDecoder) properties() (map[string]any, error) {
	return firstUnshadowed(d, []string{MetaApplicationProperties, MetaUserProperties}, parseObject)
}

// firstUnshadowed parses the first of keys (aliases of one value) that is present and not
// possibly overwritten by a body field; when every present key was shadowed, keys[0] is
// recorded in d.shadowed and the zero value returned.
func firstUnshadowed[T any](d *sbDecoder, keys []string, parse func(json.RawMessage) (T, bool, error)) (T, error) {
	var zero T
	skipped := false
	for _, key := range keys {
		raw, ok := lookupKey(d.meta, key)
		if !ok {
			continue
		}
		if d.body.mayShadow(key) {
			skipped = true
			continue
		}
		v, present, err := parse(raw)
		if err != nil {
			return zero, d.fail(key, err)
		}
		if present {
			return v, nil
		}
	}
	if skipped {
		d.shadowed = append(d.shadowed, keys[0])
	}
	return zero, nil
}

// bindingValue returns the raw Data value of binding and the dataType it is read as
// (opts.DataType, default string). Errors: an unsupported dataType; a *DecodeError with
// ErrBindingNotFound when req is nil or has no such binding.
func bindingValue(req *InvocationRequest, binding string, opts *ServiceBusOptions) (json.RawMessage, DataType, error) {
	dt := DataTypeString
	if opts != nil && opts.DataType != "" {
		dt = opts.DataType
	}
	if dt != DataTypeString && dt != DataTypeBinary {
		return nil, "", fmt.Errorf("funchost: binding %q: unsupported dataType %q", binding, dt)
	}
	if req == nil {
		return nil, "", &DecodeError{Binding: binding, Field: "Data." + binding, Err: ErrBindingNotFound}
	}
	raw, ok := lookupKey(req.Data, binding)
	if !ok {
		return nil, "", &DecodeError{Binding: binding, Field: "Data." + binding, Err: ErrBindingNotFound}
	}
	return raw, dt, nil
}
