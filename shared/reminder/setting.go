package reminder

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/strictjson"
)

// DefaultMaxLatenessHours is how late (after ScheduledOn) a row may still be sent (docs/architecture.md#date-based-reminders).
const DefaultMaxLatenessHours = 48

// MaxAnnualOffsetDays bounds offsets of annual settings so one occurrence maps to one year.
const MaxAnnualOffsetDays = 364

// MaxOffsetDays bounds offsets of one-off settings (10 years).
const MaxOffsetDays = 3650

// Setting is a reminder setting (docs/architecture.md#inputs). JSON field names are the scenario/API names.
type Setting struct {
	Guid           string                 `json:"guid"`
	BusinessUnitID string                 `json:"businessUnitId"`
	Name           string                 `json:"name"`
	SourceType     string                 `json:"sourceType"`
	TriggerType    automation.TriggerType `json:"triggerType"`
	// TriggerKey is, for DateBased, the field of the event's data holding the target date
	// ("YYYY-MM-DD"); for ThresholdCondition, the name of the aggregate the metric is read
	// from (a SchedulerKey component, e.g. "booking").
	TriggerKey string `json:"triggerKey"`
	// OffsetsDays (DateBased) are calendar days before the target date, no duplicates: 30 is
	// 30 days before it, 0 the day itself and a negative offset is after it (-90: 90 days
	// after the date, e.g. "dormant 90 days after the last transaction"). Each is within
	// ±MaxOffsetDays (±MaxAnnualOffsetDays for annual settings). Every rule (late rule, DST
	// rule, settings changes, reconciliation) treats both directions alike: the occurrence's
	// local date is target − offset.
	OffsetsDays []int `json:"offsetsDays,omitempty"`
	// SendLocalTime (DateBased) is the local wall time ("HH:MM") in the business unit's zone.
	SendLocalTime *localtime.TimeOfDay `json:"sendLocalTime,omitempty"`
	// Annual makes the target the next anniversary of the date (work anniversaries, birthdays).
	Annual bool `json:"annual,omitempty"`
	// ImmediateIfOverdue (DateBased, not annual): a source whose target date has already
	// passed when it is seen gets one notification now (the immediate-notification provider,
	// docs/architecture.md#event-flow), once per target date.
	ImmediateIfOverdue bool `json:"immediateIfOverdue,omitempty"`
	// Threshold configures a ThresholdCondition setting (docs/architecture.md#threshold-reminders); nil for DateBased.
	Threshold  *ThresholdConfig `json:"threshold,omitempty"`
	Template   string           `json:"template"`
	Channels   []string         `json:"channels"`
	Recipients RecipientPolicy  `json:"recipients"`
	// IsActive defaults to true when omitted.
	IsActive *bool `json:"isActive,omitempty"`
	// MaxLatenessHours: a row found due later than this after ScheduledOn is Deactivated
	// TooLate (default 48).
	MaxLatenessHours *int `json:"maxLatenessHours,omitempty"`
}

// RecipientPolicy says who receives the reminder; resolved at execution time (docs/architecture.md#revalidation), never
// stored on the scheduler row. At least one part is required; the recipients are the union
// of all parts (duplicates removed, at most MaxRecipients).
type RecipientPolicy struct {
	// Field is the source data field holding an address, or an array of addresses.
	Field string `json:"field,omitempty"`
	// Role names a role list of the setting's business unit (BusinessUnitRecord.Roles), read
	// when the reminder is due.
	Role string `json:"role,omitempty"`
	// Fixed lists addresses that always receive the reminder.
	Fixed []string `json:"fixed,omitempty"`
}

// Active reports IsActive (default true).
func (s Setting) Active() bool { return s.IsActive == nil || *s.IsActive }

// MaxLatenessHoursOrDefault returns MaxLatenessHours or the default.
func (s Setting) MaxLatenessHoursOrDefault() int {
	if s.MaxLatenessHours == nil {
		return DefaultMaxLatenessHours
	}
	return *s.MaxLatenessHours
}

var (
	guidRE  = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	tokenRE = regexp.MustCompile(`^[A-Za-z0-9._~@+/-]{1,100}$`)
	// templateKeyRE is a NotificationTemplate key (shared/delivery; NotificationJob.Template
	// is nvarchar(200)).
	templateKeyRE = regexp.MustCompile(`^[A-Za-z0-9._~@+/-]{1,200}$`)
)

// MaxNameChars bounds display names (settings, business units): UTF-16 code units, as the
// SQL Server nvarchar columns count them.
const MaxNameChars = automation.MaxDisplayNameUnits

// validName is the one display-name rule, automation.ValidDisplayName.
func validName(s string) bool { return automation.ValidDisplayName(s) }

// ParseSetting decodes one setting strictly (unknown fields are an error) and validates it.
// Errors are automation.Invalid naming the field.
func ParseSetting(raw []byte) (Setting, error) {
	var s Setting
	// Check the fields whose decoding errors would not name them.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return Setting{}, automation.Invalid("setting", "must be a JSON object: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if v, ok := fields["sendLocalTime"]; ok {
		var str string
		if err := json.Unmarshal(v, &str); err != nil {
			return Setting{}, automation.Invalid("sendLocalTime", "must be a string \"HH:MM\"")
		}
		if _, err := localtime.ParseTimeOfDay(str); err != nil {
			return Setting{}, automation.Invalid("sendLocalTime", "%v", err)
		}
	}
	var te *json.UnmarshalTypeError
	switch err := strictjson.Decode(raw, &s); {
	case errors.Is(err, strictjson.ErrTrailing):
		return Setting{}, automation.Invalid("setting", "trailing data after the object")
	case errors.As(err, &te) && te.Field != "":
		return Setting{}, automation.Invalid(te.Field, "must be %s, got %s", jsonKind(te.Type.Kind().String()), te.Value)
	case err != nil:
		return Setting{}, automation.Invalid("setting", "%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return s, s.Validate(nil)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64":
		return "a whole number"
	case "slice":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	case "bool":
		return "true or false"
	default:
		return "a " + goKind
	}
}

// Validate checks every field; channels, when non-nil, lists the channel names that exist.
// All problems are reported together (errors.Join of automation.Invalid, one per field:
// offsetsDays[1], sendLocalTime, threshold.metric, channels, recipients, …).
func (s *Setting) Validate(channels map[string]bool) error {
	var errs []error
	bad := func(field, f string, a ...any) { errs = append(errs, automation.Invalid(field, f, a...)) }
	if !guidRE.MatchString(s.Guid) {
		bad("guid", "must be a GUID, got %q", s.Guid)
	}
	s.Guid = strings.ToLower(s.Guid)
	if !tokenRE.MatchString(s.BusinessUnitID) {
		bad("businessUnitId", "is required (letters, digits, ._~@+/-)")
	}
	if strings.TrimSpace(s.Name) == "" {
		bad("name", "is required")
	}
	if !tokenRE.MatchString(s.SourceType) {
		bad("sourceType", "is required (letters, digits, ._~@+/-)")
	}
	switch s.TriggerType {
	case automation.TriggerDateBased:
		if !tokenRE.MatchString(s.TriggerKey) {
			bad("triggerKey", "is required (the data field holding the target date)")
		}
		errs = append(errs, s.validateDateBased()...)
	case automation.TriggerThresholdCondition:
		if !tokenRE.MatchString(s.TriggerKey) {
			bad("triggerKey", "is required (the name of the aggregate the metric is read from, e.g. \"booking\")")
		}
		errs = append(errs, s.validateThreshold()...)
	default:
		bad("triggerType", "must be %q or %q, got %q", automation.TriggerDateBased, automation.TriggerThresholdCondition, s.TriggerType)
	}
	if strings.TrimSpace(s.Template) == "" {
		bad("template", "is required")
	}
	if len(s.Channels) == 0 {
		bad("channels", "needs at least one channel")
	}
	seenCh := map[string]bool{}
	for i, c := range s.Channels {
		if channels != nil && !channels[c] {
			bad(fmt.Sprintf("channels[%d]", i), "unknown channel %q", c)
		}
		if seenCh[c] {
			bad(fmt.Sprintf("channels[%d]", i), "duplicate channel %q", c)
		}
		seenCh[c] = true
	}
	errs = append(errs, s.Recipients.validate()...)
	if s.MaxLatenessHours != nil && (*s.MaxLatenessHours < 1 || *s.MaxLatenessHours > 24*30) {
		bad("maxLatenessHours", "must be 1..720, got %d", *s.MaxLatenessHours)
	}
	return errors.Join(errs...)
}

// validateWrite adds the checks of a setting being written (management API, replay
// settings inputs) to Validate's: a display name of 1..MaxNameChars characters without
// control characters (it is copied into every delivery's payload), a template key as
// NotificationTemplate keys are written (NotificationJob.Template is nvarchar(200)) and
// threshold levels of at most MaxLevelChars that are exactly the number given (a level is a
// SchedulerKey component and the ThresholdLevel column, nvarchar(50)). They are not applied
// to stored settings, so a setting stored before them stays readable by the event path.
func (s *Setting) validateWrite() []error {
	var errs []error
	if strings.TrimSpace(s.Name) != "" && !validName(s.Name) {
		errs = append(errs, automation.Invalid("name", "must be 1..%d characters without control or bidirectional-text characters", MaxNameChars))
	}
	if strings.TrimSpace(s.Template) != "" && !templateKeyRE.MatchString(s.Template) {
		errs = append(errs, automation.Invalid("template", "must be a template key: 1..200 letters, digits and ._~@+/-"))
	}
	if s.Threshold != nil {
		for i, l := range s.Threshold.Levels {
			if _, err := levelText(l); err != nil {
				continue // reported by Validate
			}
			if err := checkLevelWrite(l); err != nil {
				errs = append(errs, automation.Invalid(fmt.Sprintf("threshold.levels[%d]", i), "%v", err))
			}
		}
	}
	return errs
}

func (s *Setting) validateDateBased() []error {
	var errs []error
	bad := func(field, f string, a ...any) { errs = append(errs, automation.Invalid(field, f, a...)) }
	if s.Threshold != nil {
		bad("threshold", "is only for triggerType %q", automation.TriggerThresholdCondition)
	}
	if len(s.OffsetsDays) == 0 {
		bad("offsetsDays", "needs at least one offset")
	}
	maxOff := MaxOffsetDays
	if s.Annual {
		maxOff = MaxAnnualOffsetDays
	}
	seen := map[int]bool{}
	for i, d := range s.OffsetsDays {
		if d < -maxOff || d > maxOff {
			bad(fmt.Sprintf("offsetsDays[%d]", i), "must be -%d..%d days (negative: after the date), got %d", maxOff, maxOff, d)
		}
		if seen[d] {
			bad(fmt.Sprintf("offsetsDays[%d]", i), "duplicate offset %d", d)
		}
		seen[d] = true
	}
	if s.SendLocalTime == nil {
		bad("sendLocalTime", "is required (\"HH:MM\", local to the business unit)")
	}
	if s.Annual && s.ImmediateIfOverdue {
		bad("immediateIfOverdue", "cannot be combined with annual (an annual date is never overdue)")
	}
	return errs
}

func (s *Setting) validateThreshold() []error {
	var errs []error
	bad := func(field, f string, a ...any) { errs = append(errs, automation.Invalid(field, f, a...)) }
	if len(s.OffsetsDays) > 0 {
		bad("offsetsDays", "is only for triggerType %q", automation.TriggerDateBased)
	}
	if s.SendLocalTime != nil {
		bad("sendLocalTime", "is only for triggerType %q (thresholds are due when reached; use threshold.sendWindow for quiet hours)", automation.TriggerDateBased)
	}
	if s.Annual {
		bad("annual", "is only for triggerType %q", automation.TriggerDateBased)
	}
	if s.ImmediateIfOverdue {
		bad("immediateIfOverdue", "is only for triggerType %q", automation.TriggerDateBased)
	}
	if s.Threshold == nil {
		bad("threshold", "is required for triggerType %q (metric, levels, firingPolicy)", automation.TriggerThresholdCondition)
		return errs
	}
	return append(errs, s.Threshold.validate("threshold")...)
}

func (p RecipientPolicy) validate() []error {
	var errs []error
	bad := func(field, f string, a ...any) { errs = append(errs, automation.Invalid(field, f, a...)) }
	if p.Field == "" && p.Role == "" && len(p.Fixed) == 0 {
		bad("recipients", "needs field (a source data field), role (a business-unit role list) or fixed (addresses)")
	}
	if p.Field != "" && !tokenRE.MatchString(p.Field) {
		bad("recipients.field", "must be a data field name (letters, digits, ._~@+/-)")
	}
	if p.Role != "" && !tokenRE.MatchString(p.Role) {
		bad("recipients.role", "must be a role name (letters, digits, ._~@+/-)")
	}
	if len(p.Fixed) > MaxRecipients {
		bad("recipients.fixed", "lists %d addresses, more than %d", len(p.Fixed), MaxRecipients)
	}
	for i, a := range p.Fixed {
		if strings.TrimSpace(a) == "" || strings.IndexFunc(a, unicode.IsControl) >= 0 || len(a) > 320 {
			bad(fmt.Sprintf("recipients.fixed[%d]", i), "must be a non-empty address without control characters (at most 320 characters)")
		}
	}
	return errs
}
