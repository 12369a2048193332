package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"

	cloudevents "github.com/cloudevents/sdk-go/v2/event"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/strictjson"
)

// Event is a validated domain event.
type Event struct {
	ID             string
	Source         string
	Type           string
	Subject        string
	Time           time.Time // UTC; zero when the event has no "time"
	BusinessUnitID string
	EntityType     string
	EntityGuid     string
	// Revision is monotonic per entity; older revisions than the stored one are ignored.
	Revision int64
	// Deleted is true when Type ends with ".deleted": the entity is gone.
	Deleted bool
	// Data is the entity's current fields (fat event), a JSON object.
	Data map[string]any
	// DataJSON is Data as received (compact JSON).
	DataJSON string
}

// validAttrName: lower-case a-z and 0-9 only, 1 to 20 characters (^[a-z0-9]{1,20}$; a
// loop, as it runs for every attribute of every event).
func validAttrName(name string) bool {
	if len(name) == 0 || len(name) > 20 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

var tokenRE = regexp.MustCompile(`^[A-Za-z0-9._~@+/-]+$`)

// Bounds of the token extensions, in characters (a token is ASCII, so also UTF-16 code
// units and bytes): every SQL column a value lands in holds 100 — businessunitid in
// BusinessUnitId (AutomationScheduler, NotificationJob, SourceSnapshot, DeliveryProjection,
// SupportAudit) and entitytype / entityguid in SourceEntityType / SourceEntityGuid
// (AutomationScheduler, ThresholdEdgeState) and EntityType / EntityGuid (SourceSnapshot,
// SourceStaleEvent), all nvarchar(100) in sql/mssql/migrations (SQLite's TEXT has no bound).
// A longer value is rejected here, naming the field, rather than failing in the store.
const (
	MaxBusinessUnitIDLength = 100
	MaxEntityTypeLength     = 100
	MaxEntityGuidLength     = 100
)

// Bounds of the context attributes that are stored or logged, in UTF-16 code units (the
// unit of SQL Server's nvarchar; a character outside the BMP counts two). id and source are
// the dedupe key, ProcessedEvent (EventSource, EventId) nvarchar(200) each, and the id is
// also SourceSnapshot.LastEventId nvarchar(200); subject is not stored and has the same
// bound so a log line or dead letter stays small.
const (
	MaxIDLength      = 200
	MaxSourceLength  = 200
	MaxSubjectLength = 200
)

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += max(1, utf16.RuneLen(r))
	}
	return n
}

// Parse decodes and validates one CloudEvent in structured JSON mode. Required beyond the
// CloudEvents spec: extensions businessunitid, entitytype, entityguid (tokens of letters,
// digits and ._~@+/-, at most MaxBusinessUnitIDLength, MaxEntityTypeLength and
// MaxEntityGuidLength) and revision (a non-negative integer, as a JSON number or decimal
// string); data must be a JSON object (datacontenttype absent or application/json); id,
// source and subject at most MaxIDLength, MaxSourceLength and MaxSubjectLength. The JSON
// must follow strictjson.CheckExact: no member given twice in one object (at any depth; data
// is read into a map, so "email" and "Email" are two members), no lone surrogate escape, UTF-8.
// Errors are automation.Invalid with the offending field named.
func Parse(raw []byte) (Event, error) {
	// revision is read from the raw JSON: the CloudEvents integer type is 32-bit and the SDK
	// would silently truncate 1.5, while revisions are 64-bit counters.
	raw, fields, err := strictObject(raw)
	if err != nil {
		return Event{}, err
	}
	if err := checkContext(fields); err != nil {
		return Event{}, err
	}
	rawRev, hasRev := fields["revision"]
	if hasRev {
		delete(fields, "revision")
		raw, _ = json.Marshal(fields)
	}
	var ce cloudevents.Event
	if err := json.Unmarshal(raw, &ce); err != nil {
		return Event{}, automation.Invalid("event", "not a valid CloudEvent: %v", err)
	}
	if err := ce.Validate(); err != nil {
		return Event{}, automation.Invalid("event", "not a valid CloudEvent 1.0: %v", err)
	}
	if ce.SpecVersion() != "1.0" {
		return Event{}, automation.Invalid("specversion", "must be \"1.0\", got %q", ce.SpecVersion())
	}
	ev := Event{ID: ce.ID(), Source: ce.Source(), Type: ce.Type(), Subject: ce.Subject()}
	if !ce.Time().IsZero() {
		ev.Time = ce.Time().UTC()
	}
	ext := ce.Extensions()
	if ev.BusinessUnitID, err = tokenExt(ext, "businessunitid", MaxBusinessUnitIDLength); err != nil {
		return Event{}, err
	}
	if ev.EntityType, err = tokenExt(ext, "entitytype", MaxEntityTypeLength); err != nil {
		return Event{}, err
	}
	if ev.EntityGuid, err = tokenExt(ext, "entityguid", MaxEntityGuidLength); err != nil {
		return Event{}, err
	}
	if !hasRev {
		return Event{}, automation.Invalid("revision", "extension is required")
	}
	if ev.Revision, err = parseRevision(rawRev); err != nil {
		return Event{}, err
	}
	ev.Deleted = strings.HasSuffix(strings.ToLower(ev.Type), ".deleted")
	if ct := ce.DataContentType(); ct != "" && !isJSONMediaType(ct, false) {
		return Event{}, automation.Invalid("datacontenttype", "must be application/json, got %q", ct)
	}
	if ce.DataBase64 {
		return Event{}, automation.Invalid("data_base64", "binary data is not accepted; send data as a JSON object")
	}
	data := bytes.TrimSpace(ce.Data())
	switch {
	case len(data) == 0 || string(data) == "null":
		if !ev.Deleted {
			return Event{}, automation.Invalid("data", "is required (the entity's current fields)")
		}
		ev.Data, ev.DataJSON = map[string]any{}, "{}"
	default:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&ev.Data); err != nil || ev.Data == nil {
			return Event{}, automation.Invalid("data", "must be a JSON object")
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			return Event{}, automation.Invalid("data", "must be a JSON object")
		}
		ev.DataJSON = buf.String()
	}
	return ev, nil
}

// checkContext checks the context attributes the SDK would otherwise report without naming
// the field (its errors become Invalid("event", ...)): specversion, id, source, type,
// datacontenttype and time.
func checkContext(fields map[string]json.RawMessage) error {
	str := func(name string) (string, bool, error) {
		raw, ok := fields[name]
		if !ok || string(bytes.TrimSpace(raw)) == "null" {
			return "", false, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", true, automation.Invalid(name, "must be a string, got %s", string(raw))
		}
		return s, true, nil
	}
	for name, raw := range fields {
		if name == "data" || name == "data_base64" {
			continue
		}
		// CloudEvents 1.0 section 3.1.1: attribute names are lower-case a-z and 0-9 only.
		if !validAttrName(name) {
			return automation.Invalid(name, "is not a valid CloudEvents attribute name (lower-case letters and digits, at most 20)")
		}
		// Context attribute values are scalars (string, number, boolean); objects and arrays
		// belong in data.
		if t := bytes.TrimSpace(raw); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
			return automation.Invalid(name, "must be a string, number or boolean (structured values belong in data)")
		}
	}
	v, ok, err := str("specversion")
	if err != nil {
		return err
	}
	if !ok || v != "1.0" {
		return automation.Invalid("specversion", "must be \"1.0\", got %q", v)
	}
	for _, name := range []string{"subject", "dataschema"} {
		if _, _, err := str(name); err != nil {
			return err
		}
	}
	for _, name := range []string{"id", "source", "type"} {
		v, _, err := str(name)
		if err != nil {
			return err
		}
		if v == "" {
			return automation.Invalid(name, "is required (a non-empty string)")
		}
	}
	for name, max := range map[string]int{"id": MaxIDLength, "source": MaxSourceLength, "subject": MaxSubjectLength} {
		v, _, _ := str(name)
		if utf16Len(v) > max {
			return automation.Invalid(name, "is longer than %d characters (UTF-16 code units)", max)
		}
		// The rule of POST /api/events (docs/gateway.md#bad-input), on every route: a
		// control character (C0, DEL, C1) would reach the ledgers, the logs and the console.
		if strings.IndexFunc(v, unicode.IsControl) >= 0 {
			return automation.Invalid(name, "must not contain control characters (NUL, tab, newline, …)")
		}
	}
	if ct, ok, err := str("datacontenttype"); err != nil {
		return err
	} else if ok && !isJSONMediaType(ct, false) {
		return automation.Invalid("datacontenttype", "must be application/json, got %q", ct)
	}
	if ts, ok, err := str("time"); err != nil {
		return err
	} else if ok {
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			return automation.Invalid("time", "must be an RFC 3339 timestamp, got %q", ts)
		}
	}
	return nil
}

// parseRevision accepts a JSON integer or a string of decimal digits, 0..2^63-1.
func parseRevision(raw json.RawMessage) (int64, error) {
	text := string(bytes.TrimSpace(raw))
	var str string
	if json.Unmarshal(raw, &str) == nil {
		text = str
	}
	if !revisionRE.MatchString(text) {
		return 0, automation.Invalid("revision", "must be a non-negative integer, got %s", string(raw))
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, automation.Invalid("revision", "out of range: %s", text)
	}
	return v, nil
}

var revisionRE = regexp.MustCompile(`^[0-9]{1,19}$`)

func tokenExt(ext map[string]any, name string, maxLen int) (string, error) {
	v, ok := ext[name]
	if !ok {
		return "", automation.Invalid(name, "extension is required")
	}
	s, ok := v.(string)
	if ok && len(s) > maxLen {
		return "", automation.Invalid(name, "is longer than %d characters", maxLen)
	}
	if !ok || !tokenRE.MatchString(s) {
		return "", automation.Invalid(name, "must be a non-empty token of letters, digits and ._~@+/- (got %v)", v)
	}
	return s, nil
}

// Handler processes one parsed event.
type Handler interface {
	HandleEvent(ctx context.Context, ev Event) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, ev Event) error

// HandleEvent calls f.
func (f HandlerFunc) HandleEvent(ctx context.Context, ev Event) error { return f(ctx, ev) }

// Router sends each event to the handlers registered for its entity type, then to the
// handlers registered for every type (e.g. setting-driven reminders), in registration order.
type Router struct {
	byType map[string][]Handler
	all    []Handler
}

// NewRouter returns an empty router.
func NewRouter() *Router { return &Router{byType: map[string][]Handler{}} }

// Register adds h for one entity type.
func (r *Router) Register(entityType string, h Handler) {
	r.byType[entityType] = append(r.byType[entityType], h)
}

// RegisterAll adds h for every entity type.
func (r *Router) RegisterAll(h Handler) { r.all = append(r.all, h) }

// Dispatch runs the handlers for ev; the first error stops it and is returned (the event
// is then redelivered; handlers are idempotent).
func (r *Router) Dispatch(ctx context.Context, ev Event) error {
	for _, h := range append(append([]Handler(nil), r.byType[ev.EntityType]...), r.all...) {
		ranHandler(ctx)
		if err := h.HandleEvent(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// strictObject trims raw and reads it as one JSON object of members (the event's
// attributes), under strictjson.CheckExact: the id is the dedupe key, so {"id":"a","id":"b"}
// must not be read as "b" here and as "a" by another reader, and a lone surrogate must not
// be stored as U+FFFD. Errors are automation.Invalid naming the member ("event" for the
// whole text).
func strictObject(raw []byte) ([]byte, map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil, automation.Invalid("event", "not a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, nil, automation.Invalid("event", "not valid JSON: %v", err)
	}
	if err := strictjson.CheckExact(raw); err != nil {
		var ae *automation.Error
		if errors.As(err, &ae) {
			field := ae.Field
			if field == "" {
				field = "event"
			}
			return nil, nil, automation.Invalid(field, "%s", ae.Message)
		}
		return nil, nil, automation.Invalid("event", "%v", err)
	}
	return raw, fields, nil
}
