package funchost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Metadata keys of a batch Service Bus trigger ("cardinality": "many"): the extension's
// binding data for a batch names each per-message value with the suffix "Array", the i-th
// element being the i-th message's (docs/functions-protocol.md#service-bus-batches).
const (
	MetaMessageIDArray             = "MessageIdArray"
	MetaSessionIDArray             = "SessionIdArray"
	MetaCorrelationIDArray         = "CorrelationIdArray"
	MetaContentTypeArray           = "ContentTypeArray"
	MetaDeliveryCountArray         = "DeliveryCountArray"
	MetaEnqueuedTimeUtcArray       = "EnqueuedTimeUtcArray"
	MetaApplicationPropertiesArray = "ApplicationPropertiesArray"
	MetaUserPropertiesArray        = "UserPropertiesArray" // alias of ApplicationPropertiesArray
)

// ServiceBusBatchItem is one message of a batch invocation. Err (a *DecodeError naming
// "Data.{binding}[i]" or "Metadata.{Key}Array[i]") is set when that message alone could not
// be decoded; its batch-mates are decoded all the same. Message is never nil: with Err it
// holds what was decoded before the error (the string values, MessageId first, are decoded
// before the body), for the dead-letter record.
type ServiceBusBatchItem struct {
	Message *ServiceBusMessage
	Err     error
}

// DecodeServiceBusBatch decodes the Service Bus trigger binding named binding of a function
// declared with "cardinality": "many" and "dataType": "string": Data[binding] is the array of
// message bodies (as the host sends it, a JSON string holding a JSON array whose elements are
// the bodies, each encoded once: the host serializes the string[] with JsonConvert; a JSON
// array as is is accepted too, and an element that is a JSON object is taken as the body),
// and Metadata carries one array per key (MessageIdArray, DeliveryCountArray, …; each a JSON
// string holding a JSON array, or the array itself), each as long as the body array. A body
// is not unwrapped a second time, so a body that is itself a JSON string literal arrives as
// that literal (docs/functions-protocol.md#service-bus-batches). The items come in the order
// of the bodies.
//
// An invocation in the single-message shape (no *Array key in Metadata, and a MessageId or
// DeliveryCount in it or a Data value that is not a JSON array) decodes as a batch of one
// (DecodeServiceBus), so a handler that takes batches also takes a function declared
// "cardinality": "one"; a single message whose body is a JSON array stays one message.
//
// Errors: a *DecodeError for the invocation as a whole when the binding is missing, its
// value is not an array, or a Metadata array is malformed or not as long as the bodies (a
// message can no longer be told from its batch-mates); a message whose own body or
// per-message value is malformed gets its Err instead. Body fields are not copied into a
// batch's Metadata (the host does that for a single string value only), so nothing is
// shadowed.
func DecodeServiceBusBatch(req *InvocationRequest, binding string, opts *ServiceBusOptions) ([]ServiceBusBatchItem, error) {
	raw, dt, err := bindingValue(req, binding, opts)
	if err != nil {
		return nil, err
	}
	if !isBatch(req.Metadata, raw) {
		m, err := DecodeServiceBus(req, binding, opts)
		if err != nil {
			return nil, err
		}
		return []ServiceBusBatchItem{{Message: m}}, nil
	}
	bodies, err := jsonArray(raw)
	if err != nil {
		return nil, &DecodeError{Binding: binding, Field: "Data." + binding, Err: err}
	}
	n := len(bodies)
	meta := map[string][]json.RawMessage{}
	for _, key := range []string{MetaMessageIDArray, MetaSessionIDArray, MetaCorrelationIDArray, MetaContentTypeArray,
		MetaDeliveryCountArray, MetaEnqueuedTimeUtcArray, MetaApplicationPropertiesArray, MetaUserPropertiesArray} {
		v, ok := lookupKey(req.Metadata, key)
		if !ok || isNull(v) {
			continue
		}
		arr, err := jsonArray(v)
		if err == nil && len(arr) != n {
			err = fmt.Errorf("%d values for %d messages", len(arr), n)
		}
		if err != nil {
			return nil, &DecodeError{Binding: binding, Field: "Metadata." + key, Err: err}
		}
		meta[key] = arr
	}
	items := make([]ServiceBusBatchItem, n)
	for i := range bodies {
		m, err := decodeBatchItem(binding, i, bodies[i], dt, meta)
		items[i] = ServiceBusBatchItem{Message: m, Err: err}
	}
	return items, nil
}

// isBatch reports whether an invocation has the batch shape: a per-message array in
// Metadata, or a Data value that is a JSON array as is with no single-message Metadata (a
// MessageId or DeliveryCount says the array is one message's body).
func isBatch(meta map[string]json.RawMessage, data json.RawMessage) bool {
	for _, key := range []string{MetaMessageIDArray, MetaDeliveryCountArray} {
		if _, ok := lookupKey(meta, key); ok {
			return true
		}
	}
	for _, key := range []string{MetaMessageID, MetaDeliveryCount} {
		if _, ok := lookupKey(meta, key); ok {
			return false
		}
	}
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] == '['
}

// jsonArray returns the elements of a JSON array, given as is or as a JSON string holding
// one (how the host serializes an array value).
func jsonArray(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, errors.New("expected an array, got null")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("invalid JSON string: %w", err)
		}
		raw = bytes.TrimSpace([]byte(s))
		if len(raw) == 0 || raw[0] != '[' {
			return nil, fmt.Errorf("expected an array, got a string holding %s", jsonKind(raw))
		}
	}
	if raw[0] != '[' {
		return nil, fmt.Errorf("expected an array, got %s", jsonKind(raw))
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err != nil {
		return nil, fmt.Errorf("invalid JSON array: %w", err)
	}
	return arr, nil
}

// decodeBatchItem decodes message i of a batch.
func decodeBatchItem(binding string, i int, body json.RawMessage, dt DataType, meta map[string][]json.RawMessage) (*ServiceBusMessage, error) {
	fail := func(field string, err error) error {
		return &DecodeError{Binding: binding, Field: fmt.Sprintf("%s[%d]", field, i), Err: err}
	}
	m := &ServiceBusMessage{}
	for _, f := range m.metaStrings() {
		if arr := meta[f.arrayKey]; arr != nil {
			s, _, err := scalarText(arr[i])
			if err != nil {
				return m, fail("Metadata."+f.arrayKey, err)
			}
			*f.dst = s
		}
	}
	if arr := meta[MetaDeliveryCountArray]; arr != nil {
		c, _, err := parseInt(arr[i])
		if err == nil && (c < 0 || c > 1<<31-1) {
			err = fmt.Errorf("out of range: %d", c)
		}
		if err != nil {
			return m, fail("Metadata."+MetaDeliveryCountArray, err)
		}
		m.DeliveryCount = int(c)
	}
	if arr := meta[MetaEnqueuedTimeUtcArray]; arr != nil {
		t, _, err := parseTime(arr[i])
		if err != nil {
			return m, fail("Metadata."+MetaEnqueuedTimeUtcArray, err)
		}
		m.EnqueuedTimeUtc = t
	}
	for _, key := range []string{MetaApplicationPropertiesArray, MetaUserPropertiesArray} {
		arr := meta[key]
		if arr == nil {
			continue
		}
		p, present, err := parseObject(arr[i])
		if err != nil {
			return m, fail("Metadata."+key, err)
		}
		if present {
			m.ApplicationProperties = p
			break
		}
	}
	b, err := decodeBody(body, dt, false)
	if err != nil {
		return m, fail("Data."+binding, err)
	}
	m.Body = b
	return m, nil
}

// ServiceBusBatch decodes the batch Service Bus trigger binding named binding ("message"
// in our function.json) declared with the default dataType (string); see
// DecodeServiceBusBatch.
func (inv *Invocation) ServiceBusBatch(binding string) ([]ServiceBusBatchItem, error) {
	return DecodeServiceBusBatch(inv.Request, binding, nil)
}
