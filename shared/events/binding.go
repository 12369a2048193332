package events

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/binding"
	cloudevents "github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/strictjson"
)

// Content types of the CloudEvents HTTP binding (docs/gateway.md#content-modes).
const (
	ContentTypeStructured = "application/cloudevents+json"
	ContentTypeBatch      = "application/cloudevents-batch+json"
)

// MaxBatchEvents bounds a batched request; a larger batch is refused whole (413).
const MaxBatchEvents = 500

// CodeContentTooLarge is the code of a batch over MaxBatchEvents (HTTP 413; the same code
// as shared/httpapi's body limit).
const CodeContentTooLarge automation.ErrorCode = "ContentTooLarge"

// Raw is one event read from a request or message, in structured JSON form (the form Parse
// and ParseEnvelope read), or why it could not be read (Err, an automation.Invalid naming
// the attribute).
type Raw struct {
	JSON []byte
	Err  error
}

// Content modes.
const (
	ModeBinary     = "binary"
	ModeStructured = "structured"
	ModeBatch      = "batch"
)

// DecodeHTTP reads the events of one request of the CloudEvents HTTP binding (version 1.0):
//   - binary mode (a ce-specversion header; the attributes in ce-* headers, read by the SDK's HTTP binding,
//     and data the body, whose Content-Type is datacontenttype) — the SDKs' default;
//   - batched mode (Content-Type application/cloudevents-batch+json: a JSON array of
//     structured events, at most MaxBatchEvents);
//   - structured mode (anything else: the body is one event as JSON, as
//     application/cloudevents+json or application/json).
//
// Errors that concern the whole request: a batch that is not a JSON array (CodeMalformed,
// 400), a batch over MaxBatchEvents (CodeContentTooLarge, 413). An event that cannot be read
// is a Raw with Err, so one bad event of a batch does not affect the others.
func DecodeHTTP(ctx context.Context, header http.Header, body []byte) (string, []Raw, error) {
	if header.Get("Ce-Specversion") != "" {
		return ModeBinary, []Raw{binaryEvent(ctx, header, body)}, nil
	}
	// Structured or batched: the one media-type rule of every API (a missing Content-Type
	// is taken as a structured event; anything but the CloudEvents and JSON types is 415).
	mt, err := strictjson.MediaType(header.Get("Content-Type"), ContentTypeStructured, strictjson.MediaTypeJSON, ContentTypeBatch)
	if err != nil {
		return ModeStructured, nil, err
	}
	if mt != ContentTypeBatch {
		if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
			return ModeStructured, []Raw{{Err: automation.Invalid("event", "a JSON array is a batch: send it with Content-Type: %s (%s is one event)", ContentTypeBatch, mt)}}, nil
		}
		return ModeStructured, []Raw{{JSON: body}}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('[') {
		return ModeBatch, nil, malformedBatch("")
	}
	var out []Raw
	for dec.More() {
		var elem json.RawMessage
		if err := dec.Decode(&elem); err != nil {
			return ModeBatch, nil, malformedBatch(err.Error())
		}
		if len(out) == MaxBatchEvents {
			return ModeBatch, nil, &automation.Error{Code: CodeContentTooLarge, Field: "body",
				Message: "a batch holds at most 500 events; split it"}
		}
		out = append(out, Raw{JSON: elem})
	}
	if _, err := dec.Token(); err != nil {
		return ModeBatch, nil, malformedBatch(err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return ModeBatch, nil, &automation.Error{Code: automation.CodeMalformed, Field: "body", Message: "trailing data after the batch"}
	}
	return ModeBatch, out, nil
}

// malformedBatch: a batch body that is not a JSON array of events is an unreadable request
// (CodeMalformed, 400), like any body that is not JSON.
func malformedBatch(detail string) error {
	msg := "a batch is a JSON array of CloudEvents"
	if detail != "" {
		msg += ": " + detail
	}
	return &automation.Error{Code: automation.CodeMalformed, Field: "body", Message: msg}
}

// binaryEvent reads a binary-mode event with the SDK's HTTP binding and writes it in
// structured form.
func binaryEvent(ctx context.Context, header http.Header, body []byte) Raw {
	for name, vals := range header {
		if strings.HasPrefix(strings.ToLower(name), "ce-") && len(vals) > 1 {
			return Raw{Err: automation.Invalid(strings.ToLower(name[3:]), "given %d times", len(vals))}
		}
	}
	msg := cehttp.NewMessage(header, io.NopCloser(bytes.NewReader(body)))
	ev, err := binding.ToEvent(ctx, msg)
	if err != nil {
		return Raw{Err: automation.Invalid("event", "not a valid binary-mode CloudEvent: %v", err)}
	}
	return fromSDK(ev)
}

// fromSDK writes an event decoded by an SDK binding (HTTP binary mode, AMQP application
// properties) in structured form; data must be JSON.
func fromSDK(ev *cloudevents.Event) Raw {
	ct := ev.DataContentType()
	if ct != "" && !isJSONMediaType(ct, true) {
		return Raw{Err: automation.Invalid("datacontenttype", "must be application/json, got %q", ct)}
	}
	fields := map[string]any{}
	for name, v := range ev.Extensions() {
		fields[name] = v
	}
	ctx := ev.Context.AsV1()
	fields["specversion"] = "1.0"
	fields["id"], fields["source"], fields["type"] = ctx.ID, ctx.Source.String(), ctx.Type
	if ctx.Subject != nil {
		fields["subject"] = *ctx.Subject
	}
	if ctx.Time != nil {
		fields["time"] = ctx.Time.Time.UTC().Format(time.RFC3339Nano)
	}
	if ctx.DataSchema != nil {
		fields["dataschema"] = ctx.DataSchema.String()
	}
	if ct != "" {
		fields["datacontenttype"] = ct
	}
	return structuredJSON(fields, ev.Data(), true)
}

// Envelope is a CloudEvent's context attributes and data, with no domain-event
// requirements (the gateway's events: docs/gateway.md#ingest).
type Envelope struct {
	ID, Source, Type, Subject string
	Time                      time.Time // UTC; zero when absent
	// Extensions are the extension attributes as sent (strings, numbers, booleans).
	Extensions map[string]any
	// Data is data as received (compact JSON); nil when absent.
	Data []byte
}

// ParseEnvelope decodes one structured-mode CloudEvent 1.0 with the same strict rules as
// Parse (strictjson.CheckExact, attribute names and scalar values, id/source/type
// required, time RFC 3339, data JSON) but no domain-event extension required. Errors are
// automation.Invalid naming the attribute.
func ParseEnvelope(raw []byte) (Envelope, error) {
	raw, fields, err := strictObject(raw)
	if err != nil {
		return Envelope{}, err
	}
	if err := checkContext(fields); err != nil {
		return Envelope{}, err
	}
	if _, ok := fields["data_base64"]; ok {
		return Envelope{}, automation.Invalid("data_base64", "binary data is not accepted; send data as JSON")
	}
	data := fields["data"]
	delete(fields, "data")
	head, _ := json.Marshal(fields)
	var ce cloudevents.Event
	if err := json.Unmarshal(head, &ce); err != nil {
		return Envelope{}, automation.Invalid("event", "not a valid CloudEvent: %v", err)
	}
	if err := ce.Validate(); err != nil {
		return Envelope{}, automation.Invalid("event", "not a valid CloudEvent 1.0: %v", err)
	}
	env := Envelope{ID: ce.ID(), Source: ce.Source(), Type: ce.Type(), Subject: ce.Subject(), Extensions: ce.Extensions()}
	if !ce.Time().IsZero() {
		env.Time = ce.Time().UTC()
	}
	if d := bytes.TrimSpace(data); len(d) > 0 && string(d) != "null" {
		var buf bytes.Buffer
		if err := json.Compact(&buf, d); err != nil {
			return Envelope{}, automation.Invalid("data", "is not valid JSON")
		}
		env.Data = buf.Bytes()
	}
	return env, nil
}

// AMQP binding (CloudEvents AMQP Protocol Binding 1.0, binary mode): the attributes are
// application properties named with one of these prefixes, the data is the message body
// and datacontenttype is the message's content-type.
var amqpPrefixes = []string{"cloudEvents:", "cloudEvents_"}

// DecodeServiceBusMessage reads the event of one Service Bus message: AMQP binary mode when
// an application property carries a "cloudEvents:" (or "cloudEvents_") prefix, else the
// body in structured mode. props are the message's application properties (numbers as
// json.Number or Go numbers), contentType its content type.
func DecodeServiceBusMessage(props map[string]any, contentType string, body []byte) Raw {
	fields := map[string]any{}
	for name, v := range props {
		for _, p := range amqpPrefixes {
			if len(name) > len(p) && strings.EqualFold(name[:len(p)], p) {
				attr := strings.ToLower(name[len(p):])
				if _, dup := fields[attr]; dup {
					return Raw{Err: automation.Invalid(attr, "given twice (both AMQP prefixes)")}
				}
				fields[attr] = v
			}
		}
	}
	if len(fields) == 0 {
		return Raw{JSON: body}
	}
	if ct := contentType; ct != "" {
		if _, given := fields["datacontenttype"]; !given {
			fields["datacontenttype"] = ct
		}
	}
	if ct, _ := fields["datacontenttype"].(string); ct != "" && !isJSONMediaType(ct, false) {
		return Raw{Err: automation.Invalid("datacontenttype", "must be application/json, got %q", ct)}
	}
	return structuredJSON(fields, body, false)
}

// structuredJSON is the structured event of context attributes fields and data: data
// (white space trimmed) is the "data" member when not empty; it must be valid JSON (with
// exact, also with member names unique as written: strictjson.CheckExact), else the event
// is Invalid naming "data".
func structuredJSON(fields map[string]any, data []byte, exact bool) Raw {
	if data = bytes.TrimSpace(data); len(data) > 0 {
		if exact && strictjson.CheckExact(data) != nil || !json.Valid(data) {
			return Raw{Err: automation.Invalid("data", "is not valid JSON")}
		}
		fields["data"] = json.RawMessage(data)
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return Raw{Err: automation.Invalid("event", "%v", err)}
	}
	return Raw{JSON: raw}
}

// isJSONMediaType reports whether ct (a media type with optional parameters, RFC 9110
// section 8.3.1) is application/json — or, with suffix, any type with the +json structured
// syntax suffix (RFC 6839), e.g. application/cloudevents+json. Types are compared without
// regard to case; "application/jsonx" is not JSON.
func isJSONMediaType(ct string, suffix bool) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (suffix && strings.HasSuffix(mt, "+json"))
}
