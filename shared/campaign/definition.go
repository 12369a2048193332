package campaign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/phonenumber"
	"github.com/automation-platform/automation/shared/store"
)

// Definition is what a client sends for a campaign (PUT /api/campaigns/{campaignId}) and
// what an execution snapshots when it starts.
type Definition struct {
	Name     string               `json:"name"`
	Status   store.CampaignStatus `json:"status"`
	Triggers []string             `json:"triggers"` // event types of the gateway's DIRECT route
	Actions  []Action             `json:"actions"`
}

// Action is one step of the chain.
type Action struct {
	// Key is the action's identity within the campaign ([A-Za-z0-9_-], 1..64): with Type and
	// Provider it makes the command id and effect key, so editing other actions never
	// changes this one's identity.
	Key      string          `json:"key"`
	Type     string          `json:"type"`     // an ActionType name, e.g. TOP_UP
	Provider string          `json:"provider"` // a provider name that serves Type
	Params   json.RawMessage `json:"params"`   // validated against the type's schema
	// When is the condition on the previous result: "" or "ALWAYS" (run), "SUCCEEDED",
	// "FAILED". An action whose condition does not hold is passed over.
	When string `json:"when,omitempty"`
	// Next names the key of the following action; "" = the next in the list, "END" = none.
	Next string `json:"next,omitempty"`
}

// Conditions on the previous result.
const (
	WhenAlways    = "ALWAYS"
	WhenSucceeded = "SUCCEEDED"
	WhenFailed    = "FAILED"
	NextEnd       = "END"
)

// ActionType is a kind of action with the JSON Schema (draft 2020-12) its parameters must
// satisfy. Notification types are served by delivery channels, the others by action
// providers (the HTTP action provider).
type ActionType struct {
	Name         string
	Notification bool
	Schema       string
	compiled     *jsonschema.Schema
}

const notificationSchema = `{"type":"object","additionalProperties":false,"required":["text"],
 "properties":{"subject":{"type":"string","maxLength":200},"text":{"type":"string","minLength":1,"maxLength":4000},
  "recipient":{"type":"string","minLength":1,"maxLength":400},"template":{"type":"string","maxLength":200},
  "category":{"type":"string","maxLength":64}}}`

// smsSchema is NOTIFICATION_SMS's: notificationSchema with an E.164 recipient, so a number
// the sms channel could never send to is refused when the campaign is saved (422 naming
// params.recipient), not at send; without one the execution's recipient id is the number,
// checked by the channel.
const smsSchema = `{"type":"object","additionalProperties":false,"required":["text"],
 "properties":{"subject":{"type":"string","maxLength":200},"text":{"type":"string","minLength":1,"maxLength":4000},
  "recipient":{"type":"string","format":"` + FormatPhoneNumber + `"},"template":{"type":"string","maxLength":200},
  "category":{"type":"string","maxLength":64}}}`

// whatsappSchema is NOTIFICATION_WHATSAPP's: an approved WhatsApp template by name and
// language, and its body values in order (docs/channels.md#whatsapp).
const whatsappSchema = `{"type":"object","additionalProperties":false,"required":["whatsappTemplate","language"],
 "properties":{"whatsappTemplate":{"type":"string","pattern":"^[a-z0-9_]{1,512}$"},"language":{"type":"string","pattern":"^[a-z]{2,3}(_[A-Z]{2})?$"},
  "values":{"type":"array","maxItems":20,"items":{"type":"string","minLength":1,"maxLength":1024}},
  "recipient":{"type":"string","format":"` + FormatPhoneNumber + `"},"category":{"type":"string","maxLength":64}}}`

// BuiltinActionTypes are the action types every runtime knows (docs/campaigns.md#action-types).
func BuiltinActionTypes() []ActionType {
	return []ActionType{
		{Name: "NOTIFICATION_SMS", Notification: true, Schema: smsSchema},
		{Name: "NOTIFICATION_MAIL", Notification: true, Schema: notificationSchema},
		{Name: "NOTIFICATION_WEBHOOK", Notification: true, Schema: notificationSchema},
		{Name: "NOTIFICATION_INBOX", Notification: true, Schema: notificationSchema},
		{Name: "NOTIFICATION_LOG", Notification: true, Schema: notificationSchema},
		{Name: "NOTIFICATION_PUSH", Notification: true, Schema: notificationSchema},
		{Name: "NOTIFICATION_WHATSAPP", Notification: true, Schema: whatsappSchema},
		{Name: "ADD_DATA", Schema: `{"type":"object","additionalProperties":false,"required":["packageCode","dataMb"],
		  "properties":{"packageCode":{"type":"string","pattern":"^[A-Z0-9_]{1,32}$"},"dataMb":{"type":"integer","format":"` + FormatIntegerLiteral + `","minimum":1,"maximum":1048576}}}`},
		{Name: "TOP_UP", Schema: `{"type":"object","additionalProperties":false,"required":["amountMinor","currency"],
		  "properties":{"amountMinor":{"type":"integer","format":"` + FormatIntegerLiteral + `","minimum":1,"maximum":1000000000},"currency":{"type":"string","format":"` + FormatCurrency + `"}}}`},
		{Name: "ADD_MONEY", Schema: `{"type":"object","additionalProperties":false,"required":["amountMinor","currency"],
		  "properties":{"amountMinor":{"type":"integer","format":"` + FormatIntegerLiteral + `","minimum":1,"maximum":1000000000},"currency":{"type":"string","format":"` + FormatCurrency + `"}}}`},
		{Name: "ADD_SMS", Schema: `{"type":"object","additionalProperties":false,"required":["smsCount"],
		  "properties":{"smsCount":{"type":"integer","format":"` + FormatIntegerLiteral + `","minimum":1,"maximum":1000000}}}`},
		{Name: "ADD_CALL_MINUTES", Schema: `{"type":"object","additionalProperties":false,"required":["minutes"],
		  "properties":{"minutes":{"type":"integer","format":"` + FormatIntegerLiteral + `","minimum":1,"maximum":1000000}}}`},
		{Name: "ADD_PROMOTION", Schema: `{"type":"object","additionalProperties":false,"required":["promotionCode"],
		  "properties":{"promotionCode":{"type":"string","pattern":"^[A-Z0-9_]{1,32}$"}}}`},
		{Name: "ADD_UPOINT", Schema: `{"type":"object","additionalProperties":false,"required":["points"],
		  "properties":{"points":{"type":"integer","format":"` + FormatIntegerLiteral + `","minimum":1,"maximum":100000000}}}`},
		{Name: "RENEW_LAOTV", Schema: renewLaoTVSchema},
	}
}

// renewLaoTVSchema is RENEW_LAOTV's (seed 002's LaoTV renewal, v1 parameters;
// docs/campaigns.md#action-types): the subscription package renewed, the renewal percent
// the business contract grants (a whole percent of the package's price or period, 1..100:
// 100 is a full renewal, 50 half; the provider applies it), and optionally the period in
// days (1..366; absent: the package's own). Unpriced unless a price policy says otherwise.
const renewLaoTVSchema = `{"type":"object","additionalProperties":false,"required":["packageCode","renewalPercent"],
 "properties":{"packageCode":{"type":"string","pattern":"^[A-Z0-9_]{1,32}$"},
  "renewalPercent":{"type":"integer","format":"` + FormatIntegerLiteral + `","minimum":1,"maximum":100},
  "periodDays":{"type":"integer","format":"` + FormatIntegerLiteral + `","minimum":1,"maximum":366}}}`

// ActionTypeAliases are older names of builtin action types, accepted in definitions and
// stored under their canonical name (the previous platform's names, which its price list
// uses): NOTIFICATION_EMAIL is NOTIFICATION_MAIL, ADD_POINTS is ADD_UPOINT
// (docs/campaigns.md#action-types).
var ActionTypeAliases = map[string]string{"NOTIFICATION_EMAIL": "NOTIFICATION_MAIL", "ADD_POINTS": "ADD_UPOINT"}

// CanonicalActionType returns t's canonical name (t itself unless it is an alias).
func CanonicalActionType(t string) string {
	if c, ok := ActionTypeAliases[t]; ok {
		return c
	}
	return t
}

// Formats an action type's schema may use beside the standard ones (asserted, not annotations).
const (
	// FormatIntegerLiteral: a number written as a plain integer. JSON Schema's "integer" also
	// admits 500.0 and 5e2, which a provider reading whole minor units or megabytes may refuse
	// or misread.
	FormatIntegerLiteral = "integer-literal"
	// FormatCurrency: an ISO 4217 currency amounts can be in (money.ParseCurrency).
	FormatCurrency = "iso4217"
	// FormatPhoneNumber: an E.164 number whose country calling code exists and whose length
	// is possible (phonenumber.Validate, the sms and whatsapp channels' rule).
	FormatPhoneNumber = "e164"
)

var formats = []*jsonschema.Format{
	{Name: FormatIntegerLiteral, Validate: func(v any) error {
		if n, ok := v.(json.Number); ok && strings.ContainsAny(string(n), ".eE") {
			return fmt.Errorf("%s is not written as a plain integer", n)
		}
		return nil
	}},
	{Name: FormatPhoneNumber, Validate: func(v any) error {
		if s, ok := v.(string); ok {
			return phonenumber.Validate(s)
		}
		return nil
	}},
	{Name: FormatCurrency, Validate: func(v any) error {
		if s, ok := v.(string); ok {
			if _, err := money.ParseCurrency(s); err != nil {
				return fmt.Errorf("%q is not an ISO 4217 currency", s)
			}
		}
		return nil
	}},
}

// Catalog knows the action types and which provider serves which type.
type Catalog struct {
	types     map[string]*ActionType
	Providers *Providers
}

// NewCatalog compiles the types' schemas (an error names the type whose schema is bad).
func NewCatalog(types []ActionType, providers *Providers) (*Catalog, error) {
	c := &Catalog{types: map[string]*ActionType{}, Providers: providers}
	for _, t := range types {
		comp := jsonschema.NewCompiler()
		comp.DefaultDraft(jsonschema.Draft2020)
		comp.UseLoader(jsonschema.SchemeURLLoader{})
		comp.AssertFormat()
		for _, f := range formats {
			comp.RegisterFormat(f)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(t.Schema))
		if err != nil {
			return nil, fmt.Errorf("campaign: action type %s: schema: %w", t.Name, err)
		}
		url := "urn:automation:campaign:action:" + t.Name
		if err := comp.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("campaign: action type %s: %w", t.Name, err)
		}
		if t.compiled, err = comp.Compile(url); err != nil {
			return nil, fmt.Errorf("campaign: action type %s: %w", t.Name, err)
		}
		c.types[t.Name] = &t
	}
	return c, nil
}

// Known reports whether t is the canonical name of an action type of the catalog (the
// composition root gives it to the budget service: a price policy is only for these).
func (c *Catalog) Known(t string) bool {
	_, ok := c.types[t]
	return ok
}

// Canonical returns d with every action type under its canonical name.
func (c *Catalog) Canonical(d Definition) Definition {
	d.Actions = slices.Clone(d.Actions)
	for i := range d.Actions {
		d.Actions[i].Type = CanonicalActionType(d.Actions[i].Type)
	}
	return d
}

// serves reports whether p serves t under its canonical name or one of its aliases.
func serves(p Provider, t string) bool {
	if p.Serves(t) {
		return true
	}
	for alias, canonical := range ActionTypeAliases {
		if canonical == t && p.Serves(alias) {
			return true
		}
	}
	return false
}

// Type returns the action type called name.
func (c *Catalog) Type(name string) (*ActionType, bool) {
	t, ok := c.types[name]
	return t, ok
}

var (
	keyRE     = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	triggerRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,200}$`)
)

// Limits on a definition.
const (
	MaxActions  = 20
	MaxTriggers = 20
)

func invalid(field, format string, args ...any) error {
	return &automation.Error{Code: automation.CodeInvalidInput, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Check validates a definition: name, status, triggers, every action's key (unique), type
// (known, an alias read as its canonical name), provider (known and serving that type), parameters (the type's schema), condition
// and next (a known key; following next from any action never revisits one: no cycle).
// Errors are automation.CodeInvalidInput naming the member, e.g. "actions[1].params.amountMinor".
func (c *Catalog) Check(d Definition) error {
	d = c.Canonical(d)
	if !automation.ValidDisplayName(d.Name) {
		return invalid("name", "a name of 1..%d characters without control or bidirectional-text characters is required", automation.MaxDisplayNameUnits)
	}
	switch d.Status {
	case store.CampaignActive, store.CampaignPaused, store.CampaignStopped:
	default:
		return invalid("status", "status must be ACTIVE, PAUSED or STOPPED, not %q", d.Status)
	}
	if len(d.Triggers) == 0 || len(d.Triggers) > MaxTriggers {
		return invalid("triggers", "1..%d trigger event types are required", MaxTriggers)
	}
	for i, t := range d.Triggers {
		if !triggerRE.MatchString(t) {
			return invalid(fmt.Sprintf("triggers[%d]", i), "%q is not an event type", t)
		}
	}
	if len(d.Actions) == 0 || len(d.Actions) > MaxActions {
		return invalid("actions", "1..%d actions are required", MaxActions)
	}
	index := map[string]int{}
	for i, a := range d.Actions {
		at := fmt.Sprintf("actions[%d]", i)
		if !keyRE.MatchString(a.Key) {
			return invalid(at+".key", "key must be 1..64 of A-Z a-z 0-9 _ -")
		}
		if _, dup := index[a.Key]; dup {
			return invalid(at+".key", "key %q is used twice", a.Key)
		}
		index[a.Key] = i
		t, ok := c.types[a.Type]
		if !ok {
			return invalid(at+".type", "unknown action type %q", a.Type)
		}
		p, ok := c.Providers.Get(a.Provider)
		if !ok {
			return invalid(at+".provider", "unknown provider %q", a.Provider)
		}
		if !serves(p, a.Type) {
			return invalid(at+".provider", "provider %q does not serve %s", a.Provider, a.Type)
		}
		if err := t.validate(a.Params); err != nil {
			var ae *automation.Error
			if errors.As(err, &ae) {
				ae.Field = at + ".params" + ae.Field
			}
			return err
		}
		switch a.When {
		case "", WhenAlways, WhenSucceeded, WhenFailed:
		default:
			return invalid(at+".when", "when must be ALWAYS, SUCCEEDED or FAILED, not %q", a.When)
		}
	}
	for i, a := range d.Actions {
		if a.Next != "" && a.Next != NextEnd {
			if _, ok := index[a.Next]; !ok {
				return invalid(fmt.Sprintf("actions[%d].next", i), "next names no action: %q", a.Next)
			}
		}
	}
	// Every action has one successor, so a cycle is a walk that comes back to an action.
	for start := range d.Actions {
		seen := map[int]bool{}
		for i, ok := start, true; ok; i, ok = d.successor(i) {
			if seen[i] {
				return invalid(fmt.Sprintf("actions[%d].next", i), "the chain has a cycle through %q", d.Actions[i].Key)
			}
			seen[i] = true
		}
	}
	return nil
}

// successor returns the index after action i (its Next, or i+1), false at the end.
func (d Definition) successor(i int) (int, bool) {
	switch n := d.Actions[i].Next; n {
	case NextEnd:
		return 0, false
	case "":
		return i + 1, i+1 < len(d.Actions)
	default:
		j := slices.IndexFunc(d.Actions, func(a Action) bool { return a.Key == n })
		return j, j >= 0
	}
}

// NextAction returns the index of the action that runs after action i ended with status
// (SUCCEEDED or FAILED; other terminal statuses end the chain), passing over actions whose
// condition does not hold; false when the chain ends. A definition passed by Check has no
// cycle, so the walk ends.
func (d Definition) NextAction(i int, status store.CommandStatus) (int, bool) {
	if status != store.CommandSucceeded && status != store.CommandFailed {
		return 0, false
	}
	for steps := 0; steps <= len(d.Actions); steps++ {
		j, ok := d.successor(i)
		if !ok {
			return 0, false
		}
		switch d.Actions[j].When {
		case "", WhenAlways:
			return j, true
		case string(status):
			return j, true
		}
		i = j
	}
	return 0, false
}

// validate checks params against the type's schema; the error's Field is the JSON Pointer
// of the bad member turned into ".a.b" form.
func (t *ActionType) validate(params json.RawMessage) error {
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage(`{}`)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return invalid("", "params are not JSON: %v", err)
	}
	if err := t.compiled.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			// The first leaf, unless one is an unknown member: a mistyped name ("amountMinr")
			// also makes the member it meant missing, and the typo is what to fix.
			var leaves []*jsonschema.ValidationError
			var walk func(v *jsonschema.ValidationError)
			walk = func(v *jsonschema.ValidationError) {
				if len(v.Causes) == 0 {
					leaves = append(leaves, v)
				}
				for _, c := range v.Causes {
					walk(c)
				}
			}
			walk(ve)
			leaf := leaves[0]
			for _, l := range leaves {
				if _, ok := l.ErrorKind.(*kind.AdditionalProperties); ok {
					leaf = l
					break
				}
			}
			field := ""
			for _, tok := range leaf.InstanceLocation {
				field += "." + tok
			}
			// The message without the library's "at '<location>'" prefix (the field names
			// the member); an unknown member is named itself, with the member it likely meant.
			if ap, ok := leaf.ErrorKind.(*kind.AdditionalProperties); ok && len(ap.Properties) > 0 {
				name := ap.Properties[0]
				msg := fmt.Sprintf("unknown member %q", name)
				if s := schemaAt(t.compiled, leaf.InstanceLocation); s != nil {
					if near := automation.Suggest(name, slices.Sorted(maps.Keys(s.Properties))); near != "" {
						msg += fmt.Sprintf(" (did you mean %q?)", near)
					}
				}
				return invalid(field+"."+name, "%s", msg)
			}
			if req, ok := leaf.ErrorKind.(*kind.Required); ok && len(req.Missing) > 0 {
				return invalid(field+"."+req.Missing[0], "is required")
			}
			return invalid(field, "%s", leaf.ErrorKind.LocalizedString(schemaPrinter))
		}
		return invalid("", "%v", err)
	}
	return nil
}

// schemaPrinter renders schema violations in English.
var schemaPrinter = message.NewPrinter(language.English)

// schemaAt follows an instance location through a schema's properties (nil when a step is
// not a declared property).
func schemaAt(s *jsonschema.Schema, loc []string) *jsonschema.Schema {
	for _, tok := range loc {
		if s == nil {
			return nil
		}
		s = s.Properties[tok]
	}
	return s
}
