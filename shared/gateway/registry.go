package gateway

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/strictjson"
)

// Class is how an event is routed (docs/gateway.md#classes).
type Class string

// Classes.
const (
	ClassDirect       Class = "DIRECT"       // → events (the rule/points engine)
	ClassCounter      Class = "COUNTER"      // → tracking (the attribute engine), with counter instructions
	ClassNotification Class = "NOTIFICATION" // → noti (our delivery stage)
	ClassDual         Class = "DUAL"         // → the routes listed (at least two)
	ClassSource       Class = "SOURCE"       // → source: the reminder path's entity snapshot
)

// Routes: the names in a definition and in MessageId "{eventId}:{route}".
const (
	RouteEvents   = "events"
	RouteTracking = "tracking"
	RouteNoti     = "noti"
	RouteSource   = "source"
)

// Definition is one version of an event type's registry entry (docs/gateway.md#the-registry).
// Counter instructions keep the member names of the fat payload the attribute engine reads
// (snake_case, docs/gateway.md#fat-payload); the rest is camelCase like every API.
type Definition struct {
	EventType    string          `json:"eventType"`
	Class        Class           `json:"class"`
	Routes       []string        `json:"routes,omitempty"`
	Description  string          `json:"description,omitempty"`
	Schema       json.RawMessage `json:"schema"`
	Filters      []Condition     `json:"filters,omitempty"`
	Counter      []Instruction   `json:"counterInstructions,omitempty"`
	Notification *Notification   `json:"notification,omitempty"`
}

// Condition is one filter condition on the event's data: all must hold for the event to be
// routed (UC-13 "not a transaction originated by OLS": {"pointer":"/originChannel",
// "op":"notEquals","value":"OLS"}). Pointer is a JSON Pointer into data; a member that is
// absent equals nothing.
type Condition struct {
	Pointer string `json:"pointer"`
	Op      string `json:"op"` // equals, notEquals, in, notIn, exists, notExists
	Value   any    `json:"value,omitempty"`
	Values  []any  `json:"values,omitempty"`
}

// Instruction is one counter instruction of seed 003 (docs/gateway.md#counter-instructions).
type Instruction struct {
	// AttributeCode names the attribute; a "{member}" in it is replaced by that top-level
	// member of data (UC-08 "survey_{surveyId}_completed"), which must be a token.
	AttributeCode string `json:"attribute_code"`
	EntityType    string `json:"entity_type"`
	// EntityIDPointer names the target entity's id in data (e.g. "/itemId" for ITEM); empty:
	// the event's customer id.
	EntityIDPointer string      `json:"entity_id_pointer,omitempty"`
	Operation       string      `json:"operation"`
	Period          string      `json:"period_type,omitempty"`
	Step            json.Number `json:"step,omitempty"`
	ValuePointer    string      `json:"value_pointer,omitempty"` // APPEND_UNIQUE: the value in data
	MaxItems        *int        `json:"max_items,omitempty"`
	// FromPointer (COMPUTE_GAP): the gap's start in data (an instant or a number); empty:
	// the attribute's stored value. ValuePointer is then the gap's end (empty: the event time).
	FromPointer string `json:"from_pointer,omitempty"`
	// Hot (INCREMENT/DECREMENT, LIFETIME only, no thresholds): a global counter such as an
	// item's view count, appended to a delta table and folded in batches
	// (docs/attributes.md#hot-counters).
	Hot bool `json:"hot,omitempty"`
	// TimeZone is the IANA zone of the periods (empty: the business unit's); WeekStart the
	// day a week starts on (empty: MONDAY).
	TimeZone   string      `json:"time_zone,omitempty"`
	WeekStart  string      `json:"week_start,omitempty"`
	Thresholds []Threshold `json:"thresholds,omitempty"`
}

// Threshold fires TriggerEvent when the attribute crosses Value (an exact decimal): the
// attribute engine's threshold, written in the registry as the fat payload carries it.
type Threshold = attribute.Threshold

// Cap is a capped budget a threshold's trigger spends (UC-02: at most 1,000 points per
// calendar year): the trigger fires only while the spend in the cap's period plus Cost stays
// within Limit (docs/attributes.md#caps). It is the attribute engine's attribute.Cap.
type Cap = attribute.Cap

// Notification is what a noti route sends: a delivery template, its channels and the
// recipients (a JSON Pointer into data, and/or a fixed list).
type Notification struct {
	Template         string   `json:"template"`
	Channels         []string `json:"channels"`
	RecipientPointer string   `json:"recipientPointer,omitempty"`
	Recipients       []string `json:"recipients,omitempty"`
}

// Document is the import/export file: every event type's definition (docs/gateway.md#registry-api).
type Document struct {
	Events []json.RawMessage `json:"events"`
}

// Refusal is a definition refused when saved: the JSON Pointer of the bad member (relative
// to the definition) and why. Its automation code is InvalidInput (HTTP 422).
type Refusal struct {
	Pointer string
	Reason  string
}

func (r *Refusal) Error() string { return r.Pointer + ": " + r.Reason }

// AsAutomation returns the error as an automation.Invalid naming the pointer.
func (r *Refusal) AsAutomation() error {
	p := r.Pointer
	if p == "" {
		p = "/"
	}
	return automation.Invalid(p, "%s", r.Reason)
}

func refuse(pointer, format string, args ...any) error {
	return &Refusal{Pointer: pointer, Reason: fmt.Sprintf(format, args...)}
}

//go:embed definition.schema.json
var definitionSchemaJSON []byte

var (
	definitionSchema = mustCompileMeta()
	printer          = message.NewPrinter(language.English)
)

func mustCompileMeta() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(definitionSchemaJSON))
	if err != nil {
		panic(err)
	}
	c := newCompiler()
	if err := c.AddResource("urn:automation:gateway:definition", doc); err != nil {
		panic(err)
	}
	return c.MustCompile("urn:automation:gateway:definition")
}

// newCompiler is a draft 2020-12 compiler that loads nothing from outside (no file, no
// network): a $ref must resolve inside the schema or to the draft's own meta-schemas.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	c.AssertFormat()
	return c
}

// firstViolation turns a validation error into the deepest violated member (a JSON
// Pointer) and its message: the first leaf cause with the longest instance location.
func firstViolation(err error) (string, string) {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "", err.Error()
	}
	var best *jsonschema.ValidationError
	var walk func(v *jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.Causes) == 0 {
			if best == nil || len(v.InstanceLocation) > len(best.InstanceLocation) {
				best = v
			}
			return
		}
		for _, c := range v.Causes {
			walk(c)
		}
	}
	walk(ve)
	var sb strings.Builder
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	for _, tok := range best.InstanceLocation {
		sb.WriteString("/" + esc.Replace(tok))
	}
	// A missing required member is named itself (its first one), not its parent object.
	if req, ok := best.ErrorKind.(*kind.Required); ok && len(req.Missing) > 0 {
		sb.WriteString("/" + esc.Replace(req.Missing[0]))
	}
	return sb.String(), best.ErrorKind.LocalizedString(printer)
}

// Compiled is a checked definition ready to route: its compiled data schema and routes.
type Compiled struct {
	Definition
	Version int64 // the definition's version (1, 2, …); 0 before it is saved
	Raw     json.RawMessage
	schema  *jsonschema.Schema
}

var tokenRE = regexp.MustCompile(`^[A-Za-z0-9._~@+/-]{1,200}$`)

// exactDecimalRE: an exact decimal (no exponent), at most 18 integer and 6 fraction digits.
var exactDecimalRE = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,17})(\.[0-9]{1,6})?$`)

// Checker validates definitions when they are saved. Channels, when set, are the delivery
// channels a notification may name.
type Checker struct {
	Channels map[string]bool
}

// CheckDefinition parses and validates one definition (raw JSON). Errors: a *Refusal naming
// the JSON Pointer of the bad member (relative to the definition) — a duplicated or unknown
// member, a wrong type, an invalid JSON Schema for data, an unknown operation, a period,
// unit, step, max_items or threshold that does not fit its operation, a reset policy the
// operation does not allow (RESET_ON_TRIGGER for SET_TRUE_ONCE and CHECK_AND_UPDATE_TIMER),
// routes that do not fit the class, an unknown channel. The rules are docs/gateway.md's
// (from seed 003).
func (ck Checker) CheckDefinition(raw []byte) (*Compiled, error) {
	raw = bytes.TrimSpace(raw)
	if err := strictjson.CheckExact(raw); err != nil {
		var ae *automation.Error
		if errors.As(err, &ae) {
			return nil, refuse(pointerOf(ae.Field), "%s", ae.Message)
		}
		return nil, refuse("", "%v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, refuse("", "not valid JSON: %v", err)
	}
	if err := definitionSchema.Validate(inst); err != nil {
		p, msg := firstViolation(err)
		return nil, refuse(p, "%s", msg)
	}
	var d Definition
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&d); err != nil {
		return nil, refuse("", "%v", err)
	}
	c := &Compiled{Definition: d, Raw: json.RawMessage(compact(raw))}
	if c.schema, err = compileDataSchema(d.Schema); err != nil {
		return nil, err
	}
	routes, err := routesOf(d)
	if err != nil {
		return nil, err
	}
	c.Routes = routes
	for i, f := range d.Filters {
		if err := checkCondition(f, fmt.Sprintf("/filters/%d", i)); err != nil {
			return nil, err
		}
	}
	hasTracking, hasNoti := slices.Contains(routes, RouteTracking), slices.Contains(routes, RouteNoti)
	switch {
	case hasTracking && len(d.Counter) == 0:
		return nil, refuse("/counterInstructions", "a %s event needs at least one counter instruction", RouteTracking)
	case !hasTracking && len(d.Counter) > 0:
		return nil, refuse("/counterInstructions", "only an event routed to %s carries counter instructions", RouteTracking)
	case hasNoti && d.Notification == nil:
		return nil, refuse("/notification", "a %s event needs a notification (template and channels)", RouteNoti)
	case !hasNoti && d.Notification != nil:
		return nil, refuse("/notification", "only an event routed to %s carries a notification", RouteNoti)
	}
	for i, in := range d.Counter {
		if err := checkInstruction(in, fmt.Sprintf("/counterInstructions/%d", i)); err != nil {
			return nil, err
		}
	}
	if n := d.Notification; n != nil {
		if n.RecipientPointer == "" && len(n.Recipients) == 0 {
			return nil, refuse("/notification", "name the recipients: recipientPointer (into data) and/or recipients")
		}
		for i, ch := range n.Channels {
			if ch == EventChannelName {
				// An event's notification that re-enters the gateway as an event could feed
				// itself without end: the event channel is for scheduled work only.
				return nil, refuse(fmt.Sprintf("/notification/channels/%d", i), "the %q channel is for reminders, not for an event's notification (it would ingest events from events)", EventChannelName)
			}
		}
		if ck.Channels != nil {
			for i, ch := range n.Channels {
				if !ck.Channels[ch] {
					return nil, refuse(fmt.Sprintf("/notification/channels/%d", i), "unknown channel %q (known: %s)", ch, strings.Join(slices.Sorted(maps.Keys(ck.Channels)), ", "))
				}
			}
		}
	}
	return c, nil
}

// pointerOf turns a strictjson field path ("a.b[1]") into a JSON Pointer ("/a/b/1").
func pointerOf(field string) string {
	if field == "" || field == "event" {
		return ""
	}
	field = strings.NewReplacer("[", ".", "]", "").Replace(field)
	parts := strings.Split(field, ".")
	for i, p := range parts {
		parts[i] = strings.NewReplacer("~", "~0", "/", "~1").Replace(p)
	}
	return "/" + strings.Join(parts, "/")
}

func compact(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// compileDataSchema compiles a definition's data schema (draft 2020-12 unless it says
// another $schema). Errors: a *Refusal at /schema (or the member inside it).
func compileDataSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, refuse("/schema", "not valid JSON: %v", err)
	}
	// A number the schema library cannot handle (big.Rat gives up beyond 10^6) is refused
	// here, not saved and then silently unenforced.
	if ptr, reason, bad := absurdNumber(doc); bad {
		return nil, refuse("/schema"+ptr, "%s", reason)
	}
	c := newCompiler()
	const url = "urn:automation:gateway:data"
	if err := c.AddResource(url, doc); err != nil {
		return nil, refuse("/schema", "%v", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		var sve *jsonschema.SchemaValidationError
		if errors.As(err, &sve) {
			p, msg := firstViolation(sve.Err)
			return nil, refuse("/schema"+p, "not a valid JSON Schema (draft 2020-12): %s", msg)
		}
		return nil, refuse("/schema", "not a usable JSON Schema: %v", err)
	}
	if err := checkRefCycle(s, url); err != nil {
		return nil, err
	}
	return s, nil
}

// routesOf derives the routes of a class; DUAL lists them (at least two).
func routesOf(d Definition) ([]string, error) {
	single := map[Class]string{ClassDirect: RouteEvents, ClassCounter: RouteTracking, ClassNotification: RouteNoti, ClassSource: RouteSource}
	if r, ok := single[d.Class]; ok {
		if len(d.Routes) > 0 && !slices.Equal(d.Routes, []string{r}) {
			return nil, refuse("/routes", "a %s event is routed to %q only (leave routes out)", d.Class, r)
		}
		return []string{r}, nil
	}
	if len(d.Routes) < 2 {
		return nil, refuse("/routes", "a DUAL event lists at least two routes of events, tracking, noti, source")
	}
	out := slices.Clone(d.Routes)
	sort.Strings(out)
	return out, nil
}

func checkCondition(f Condition, at string) error {
	switch f.Op {
	case "equals", "notEquals":
		if f.Values != nil {
			return refuse(at+"/values", "%s compares with value, not values", f.Op)
		}
	case "in", "notIn":
		if f.Values == nil {
			return refuse(at+"/values", "%s needs values", f.Op)
		}
		if f.Value != nil {
			return refuse(at+"/value", "%s compares with values, not value", f.Op)
		}
	case "exists", "notExists":
		if f.Value != nil || f.Values != nil {
			return refuse(at, "%s takes no value", f.Op)
		}
	}
	// The number rule of event data (checkNumber): a filter value is compared exactly
	// (math/big) with a member of every event of the type, and an absurd one costs tens of
	// milliseconds per comparison or can equal nothing.
	if ptr, reason, bad := absurdNumber(f.Value); bad {
		return refuse(at+"/value"+ptr, "%s", reason)
	}
	for i, v := range f.Values {
		if ptr, reason, bad := absurdNumber(v); bad {
			return refuse(fmt.Sprintf("%s/values/%d%s", at, i, ptr), "%s", reason)
		}
	}
	return nil
}

// operationRules says what each operation takes (docs/gateway.md#counter-instructions). The
// operations are the attribute engine's own (attribute.Op*): the gateway checks, on ingest,
// the instructions the engine will run.
var operationRules = map[string]struct {
	period, step, value, maxItems, thresholds, unit, resetOnTrigger, integerThresholds bool
}{
	attribute.OpIncrement:           {period: true, step: true, thresholds: true, resetOnTrigger: true},
	attribute.OpDecrement:           {period: true, step: true, thresholds: true, resetOnTrigger: true},
	attribute.OpComputeGap:          {thresholds: true, unit: true, value: true},
	attribute.OpCheckAndUpdateTimer: {thresholds: true, unit: true, integerThresholds: true},
	attribute.OpAppendUnique:        {value: true, maxItems: true},
	attribute.OpSetTrueOnce:         {thresholds: true, integerThresholds: true},
	attribute.OpStreakIncrement:     {period: true, thresholds: true, resetOnTrigger: true, integerThresholds: true},
}

func checkInstruction(in Instruction, at string) error {
	r := operationRules[in.Operation] // the meta-schema admits known operations only
	switch {
	case in.Period != "" && !r.period:
		return refuse(at+"/period_type", "%s takes no period", in.Operation)
	case in.Operation == attribute.OpStreakIncrement && in.Period != "" && in.Period != "DAILY" && in.Period != "WEEKLY":
		return refuse(at+"/period_type", "a streak counts consecutive DAILY or WEEKLY periods, not %s", in.Period)
	case in.Step != "" && !r.step:
		return refuse(at+"/step", "%s takes no step", in.Operation)
	case in.ValuePointer != "" && !r.value:
		return refuse(at+"/value_pointer", "%s takes no value", in.Operation)
	case in.MaxItems != nil && !r.maxItems:
		return refuse(at+"/max_items", "%s takes no max_items", in.Operation)
	case in.FromPointer != "" && in.Operation != attribute.OpComputeGap:
		return refuse(at+"/from_pointer", "%s takes no from_pointer", in.Operation)
	case in.Hot && in.Operation != attribute.OpIncrement && in.Operation != attribute.OpDecrement:
		return refuse(at+"/hot", "only INCREMENT and DECREMENT counters can be hot, not %s", in.Operation)
	case in.Hot && in.Period != "" && in.Period != "LIFETIME":
		return refuse(at+"/period_type", "a hot counter counts over its LIFETIME, not %s", in.Period)
	case in.Hot && len(in.Thresholds) > 0:
		return refuse(at+"/thresholds", "a hot counter takes no thresholds: its increments are folded in batches, so no event sees the crossing (docs/attributes.md#hot-counters)")
	case in.WeekStart != "" && in.Period != "WEEKLY" && !hasWeeklyCap(in):
		return refuse(at+"/week_start", "only a WEEKLY period takes week_start")
	case len(in.Thresholds) > 0 && !r.thresholds:
		return refuse(at+"/thresholds", "%s takes no thresholds", in.Operation)
	}
	if in.Step != "" {
		if !exactDecimalRE.MatchString(string(in.Step)) {
			return refuse(at+"/step", "must be an exact decimal (at most 18 integer and 6 fraction digits, no exponent), got %s", in.Step)
		}
		if strings.HasPrefix(string(in.Step), "-") || strings.Trim(string(in.Step), "0.") == "" {
			return refuse(at+"/step", "must be positive, got %s", in.Step)
		}
	}
	if in.TimeZone != "" {
		if _, err := localtime.LoadZone(in.TimeZone); err != nil {
			hint := ""
			if near := automation.Suggest(in.TimeZone, localtime.ZoneIDs()); near != "" {
				hint = fmt.Sprintf(": did you mean %q?", near)
			}
			return refuse(at+"/time_zone", "unknown time zone %q (an IANA name such as Asia/Ho_Chi_Minh)%s", in.TimeZone, hint)
		}
	}
	if err := checkCodeTemplate(in.AttributeCode, at+"/attribute_code"); err != nil {
		return err
	}
	if r.maxItems {
		if in.ValuePointer == "" {
			return refuse(at+"/value_pointer", "%s needs the value to append (a JSON Pointer into data)", in.Operation)
		}
		if in.MaxItems == nil {
			return refuse(at+"/max_items", "%s needs max_items (the list's bound)", in.Operation)
		}
		if *in.MaxItems <= 0 || *in.MaxItems > 1000 {
			return refuse(at+"/max_items", "must be 1..1000, got %d", *in.MaxItems)
		}
	}
	prev := ""
	for j, t := range in.Thresholds {
		tp := fmt.Sprintf("%s/thresholds/%d", at, j)
		v := string(t.Value)
		switch {
		case !exactDecimalRE.MatchString(v):
			return refuse(tp+"/value", "must be an exact decimal (at most 18 integer and 6 fraction digits, no exponent), got %s", v)
		case r.integerThresholds && (strings.Contains(v, ".") || strings.HasPrefix(v, "-") || v == "0"):
			return refuse(tp+"/value", "%s counts whole units: a positive integer, got %s", in.Operation, v)
		case in.Operation == attribute.OpSetTrueOnce && v != "1":
			return refuse(tp+"/value", "SET_TRUE_ONCE fires when the flag becomes true: the value is 1, got %s", v)
		case r.unit && t.Unit == "":
			return refuse(tp+"/unit", "%s needs a unit (MINUTES, HOURS, DAYS or CALENDAR_DAYS)", in.Operation)
		case !r.unit && t.Unit != "":
			return refuse(tp+"/unit", "%s takes no unit", in.Operation)
		case t.ResetPolicy == "RESET_ON_TRIGGER" && in.Operation == attribute.OpComputeGap:
			return refuse(tp+"/reset_policy", "RESET_ON_TRIGGER is not allowed for COMPUTE_GAP (a gap is measured, never stored); use NONE")
		case t.ResetPolicy == "RESET_ON_TRIGGER" && !r.resetOnTrigger:
			return refuse(tp+"/reset_policy", "RESET_ON_TRIGGER is not allowed for %s (a flag set once and a timer are never reset by their trigger); use NONE", in.Operation)
		}
		if err := checkCap(t.Cap, tp+"/cap"); err != nil {
			return err
		}
		if prev != "" && !decimalLess(prev, v) {
			return refuse(tp+"/value", "thresholds must be in increasing order (%s after %s)", v, prev)
		}
		prev = v
	}
	// Last, the attribute engine's own check (one function, called at save and on each
	// tracking message), so the registry never saves an instruction the engine refuses.
	if ie := attribute.CheckInstruction(engineShape(in)); ie != nil {
		return refuse(at+ie.Member, "the attribute engine refuses it: %s", ie.Reason)
	}
	return nil
}

// engineShape is the instruction as the fat payload will carry it (instructionsFor's
// defaults), with stand-ins for what only an event supplies (the target id, the appended
// value): what attribute.CheckInstruction judges at save.
func engineShape(in Instruction) attribute.Instruction {
	out := attribute.Instruction{TargetEntityID: "entity", EntityType: in.EntityType, AttributeCode: in.AttributeCode,
		Operation: in.Operation, Period: in.Period, Step: in.Step, MaxItems: in.MaxItems, Hot: in.Hot,
		TimeZone: in.TimeZone, WeekStart: in.WeekStart}
	switch in.Operation {
	case attribute.OpIncrement, attribute.OpDecrement:
		if out.Period == "" {
			out.Period = attribute.PeriodLifetime
		}
		if out.Step == "" {
			out.Step = "1"
		}
	case attribute.OpStreakIncrement:
		if out.Period == "" {
			out.Period = attribute.PeriodDaily
		}
	case attribute.OpAppendUnique:
		out.Value = "value"
	}
	for _, t := range in.Thresholds {
		at := attribute.Threshold{Value: t.Value, Unit: t.Unit, TriggerEvent: t.TriggerEvent, ResetPolicy: t.ResetPolicy}
		if t.Cap != nil {
			at.Cap = &attribute.Cap{Budget: t.Cap.Budget, Period: t.Cap.Period, Limit: t.Cap.Limit, Cost: t.Cap.Cost}
		}
		out.Thresholds = append(out.Thresholds, at)
	}
	return out
}

// decimalLess compares two exact decimals of exactDecimalRE.
func decimalLess(a, b string) bool {
	na, nb := strings.HasPrefix(a, "-"), strings.HasPrefix(b, "-")
	if na != nb {
		return na
	}
	if na {
		return decimalLess(b[1:], a[1:])
	}
	ai, af, _ := strings.Cut(a, ".")
	bi, bf, _ := strings.Cut(b, ".")
	if len(ai) != len(bi) {
		return len(ai) < len(bi)
	}
	if ai != bi {
		return ai < bi
	}
	for len(af) < 6 {
		af += "0"
	}
	for len(bf) < 6 {
		bf += "0"
	}
	return af < bf
}

func hasWeeklyCap(in Instruction) bool {
	for _, t := range in.Thresholds {
		if t.Cap != nil && t.Cap.Period == "WEEKLY" {
			return true
		}
	}
	return false
}

// checkCap: limit and cost are positive exact decimals and the cost fits the limit.
func checkCap(c *Cap, at string) error {
	if c == nil {
		return nil
	}
	for _, x := range []struct {
		name string
		v    json.Number
	}{{"limit", c.Limit}, {"cost", c.Cost}} {
		v := string(x.v)
		if !exactDecimalRE.MatchString(v) {
			return refuse(at+"/"+x.name, "must be an exact decimal (at most 18 integer and 6 fraction digits, no exponent), got %s", v)
		}
		if strings.HasPrefix(v, "-") || strings.Trim(v, "0.") == "" {
			return refuse(at+"/"+x.name, "must be positive, got %s", v)
		}
	}
	if decimalLess(string(c.Limit), string(c.Cost)) {
		return refuse(at+"/cost", "is more than the limit (%s > %s): the trigger could never fire", c.Cost, c.Limit)
	}
	return nil
}

// codeMemberRE finds the "{member}" placeholders of an attribute code.
var codeMemberRE = regexp.MustCompile(`\{([A-Za-z0-9_]{1,50})\}`)

// checkCodeTemplate: braces only as whole "{member}" placeholders, at most 5 of them.
func checkCodeTemplate(code, at string) error {
	rest := codeMemberRE.ReplaceAllString(code, "")
	if strings.ContainsAny(rest, "{}") {
		return refuse(at, "a brace must enclose a data member name: {member}")
	}
	if n := len(codeMemberRE.FindAllString(code, -1)); n > 5 {
		return refuse(at, "at most 5 {member} placeholders, got %d", n)
	}
	return nil
}
