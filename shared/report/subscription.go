package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// DeliveryMode says how a report reaches its recipients.
type DeliveryMode string

// Delivery modes: a link to the stored file (GET /api/report-runs/{runKeyHash}/file), or the
// file as an attachment (the channel loads the blob named in the payload).
const (
	DeliverLink       DeliveryMode = "link"
	DeliverAttachment DeliveryMode = "attachment"
)

// Limits of a subscription.
const (
	MaxRecipients     = 100
	MaxParameterBytes = 4 << 10
	maxNameLength     = 200
	// maxRecipientLen bounds one recipient in UTF-16 code units: the NotificationJob.Recipient
	// column (nvarchar(2000), migration 0007; a webhook URL may be that long). Each channel
	// judges the rest (Rules.RecipientCheck).
	maxRecipientLen = 2000
)

var (
	guidRE  = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	tokenRE = regexp.MustCompile(`^[A-Za-z0-9._~@+/-]{1,100}$`)
)

// Input is what a caller sends to create or replace a subscription (POST, PUT). Template,
// channels and recipients are read again when each run executes (docs/architecture.md#report-subscriptions: changes apply to runs
// that have not run yet).
type Input struct {
	BusinessUnitID string          `json:"businessUnitId"`
	Name           string          `json:"name"`
	ReportType     string          `json:"reportType"`
	Recurrence     Recurrence      `json:"recurrence"`
	Format         string          `json:"format"`
	Delivery       DeliveryMode    `json:"delivery,omitempty"` // default "link"
	Template       string          `json:"template"`
	Channels       []string        `json:"channels"`
	Recipients     []string        `json:"recipients"`
	Parameters     json.RawMessage `json:"parameters,omitempty"` // a JSON object for the renderer
	// Status is "Active" (default) or "Paused".
	Status store.ReportSubscriptionStatus `json:"status,omitempty"`
	// UpdatedBy is who writes (not in the body, not in the stored definition): the operator's
	// principal first, set by the API from its caller and stored with the version
	// (store.ReportSubscriptionRecord.UpdatedBy, docs/security.md#audit).
	UpdatedBy string `json:"-"`
}

// Subscription is a stored subscription: its Input plus identity and stamps.
type Subscription struct {
	Guid string `json:"guid"`
	Input
	Version   int64     `json:"version"`
	CreatedOn time.Time `json:"createdOn"` // UTC
	UpdatedOn time.Time `json:"updatedOn"` // UTC
}

// Active reports whether the subscription runs on its schedule.
func (s Subscription) Active() bool { return s.Status == store.ReportSubscriptionActive }

// Rules are what validation needs from the deployment.
type Rules struct {
	Renderers *Registry
	Channels  map[string]bool // nil: any channel name
	// RecipientCheck, when set, checks a recipient for a channel (the channel's
	// delivery.Channel.ValidateRecipient); nil checks only the shape.
	RecipientCheck func(channel, recipient string) error
	// CanAttach, when set, says whether a channel sends attachments (delivery.Traits);
	// delivery "attachment" needs every channel of the subscription to.
	CanAttach   func(channel string) bool
	MinInterval time.Duration
	Now         time.Time
	TimeZoneID  string // the business unit's zone
}

// Normalize trims fields and fills defaults (Delivery link, Status Active).
func (in *Input) Normalize() {
	in.Name = strings.TrimSpace(in.Name)
	in.Template = strings.TrimSpace(in.Template)
	in.Format = strings.ToLower(strings.TrimSpace(in.Format))
	if in.Delivery == "" {
		in.Delivery = DeliverLink
	}
	if in.Status == "" {
		in.Status = store.ReportSubscriptionActive
	}
	for i, r := range in.Recipients {
		in.Recipients[i] = strings.TrimSpace(r)
	}
}

// Validate checks every field and reports all problems at once (automation.InvalidFields,
// each naming its field). The schedule must occur after Rules.Now and never more often than
// Rules.MinInterval; the report type must be registered with the format; every recipient
// must be one every channel of the subscription can send to (Rules.RecipientCheck).
func (in *Input) Validate(r Rules) (*Schedule, error) {
	in.Normalize()
	var errs []error
	bad := func(field, f string, a ...any) { errs = append(errs, automation.Invalid(field, f, a...)) }
	if !tokenRE.MatchString(in.BusinessUnitID) {
		bad("businessUnitId", "is required (letters, digits, ._~@+/-)")
	}
	if in.Name == "" || len(in.Name) > maxNameLength {
		bad("name", "is required, at most %d characters", maxNameLength)
	}
	var rend Renderer
	if !tokenRE.MatchString(in.ReportType) {
		bad("reportType", "is required")
	} else if rr, ok := r.Renderers.Lookup(in.ReportType); !ok {
		bad("reportType", "unknown report type %q; known: %s", in.ReportType, strings.Join(r.Renderers.Types(), ", "))
	} else {
		rend = rr
	}
	if rend != nil && !contains(rend.Formats(), in.Format) {
		bad("format", "report type %s renders %s, not %q", in.ReportType, strings.Join(rend.Formats(), " or "), in.Format)
	}
	if in.Delivery != DeliverLink && in.Delivery != DeliverAttachment {
		bad("delivery", "must be %q or %q, got %q", DeliverLink, DeliverAttachment, in.Delivery)
	}
	if !tokenRE.MatchString(in.Template) {
		bad("template", "is required (letters, digits, ._~@+/-)")
	}
	if len(in.Channels) == 0 {
		bad("channels", "needs at least one channel")
	}
	seen := map[string]bool{}
	for i, c := range in.Channels {
		switch {
		case r.Channels != nil && !r.Channels[c]:
			bad(fmt.Sprintf("channels[%d]", i), "unknown channel %q", c)
		case seen[c]:
			bad(fmt.Sprintf("channels[%d]", i), "duplicate channel %q", c)
		}
		seen[c] = true
		if in.Delivery == DeliverAttachment && r.CanAttach != nil && (r.Channels == nil || r.Channels[c]) && !r.CanAttach(c) {
			bad(fmt.Sprintf("channels[%d]", i), "channel %s cannot send attachments; use delivery %q", c, DeliverLink)
		}
	}
	if len(in.Recipients) == 0 || len(in.Recipients) > MaxRecipients {
		bad("recipients", "needs 1 to %d recipients", MaxRecipients)
	}
	seenR := map[string]bool{}
	for i, rcp := range in.Recipients {
		low := strings.ToLower(rcp)
		switch {
		case rcp == "" || utf16Len(rcp) > maxRecipientLen:
			bad(fmt.Sprintf("recipients[%d]", i), "must be 1 to %d characters", maxRecipientLen)
		case strings.IndexFunc(rcp, unicode.IsControl) >= 0:
			bad(fmt.Sprintf("recipients[%d]", i), "contains control characters")
		case seenR[low]:
			bad(fmt.Sprintf("recipients[%d]", i), "duplicate recipient")
		}
		seenR[low] = true
		if r.RecipientCheck == nil || rcp == "" || utf16Len(rcp) > maxRecipientLen {
			continue
		}
		for _, c := range in.Channels {
			if r.Channels != nil && !r.Channels[c] {
				continue // reported above
			}
			if err := r.RecipientCheck(c, rcp); err != nil {
				bad(fmt.Sprintf("recipients[%d]", i), "cannot receive on channel %s: %v", c, err)
				break
			}
		}
	}
	if len(in.Parameters) > 0 {
		var obj map[string]any
		if len(in.Parameters) > MaxParameterBytes {
			bad("parameters", "is larger than %d bytes", MaxParameterBytes)
		} else if err := json.Unmarshal(in.Parameters, &obj); err != nil || obj == nil {
			bad("parameters", "must be a JSON object")
		} else {
			var c bytes.Buffer
			_ = json.Compact(&c, in.Parameters)
			in.Parameters = c.Bytes()
		}
	}
	if in.Status != store.ReportSubscriptionActive && in.Status != store.ReportSubscriptionPaused {
		bad("status", "must be %q or %q, got %q", store.ReportSubscriptionActive, store.ReportSubscriptionPaused, in.Status)
	}
	var sched *Schedule
	if r.TimeZoneID != "" {
		s, err := Compile(in.Recurrence, r.TimeZoneID)
		if err == nil {
			err = s.Validate(r.Now, r.MinInterval)
		}
		if err != nil {
			errs = append(errs, err)
		} else {
			sched = s
		}
	}
	if err := automation.InvalidFields(errs...); err != nil {
		return nil, err
	}
	return sched, nil
}

// utf16Len is the length of s in UTF-16 code units (what an nvarchar column counts).
func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// record converts a subscription to its stored form.
func record(s Subscription) (store.ReportSubscriptionRecord, error) {
	body, err := json.Marshal(s.Input)
	if err != nil {
		return store.ReportSubscriptionRecord{}, err
	}
	return store.ReportSubscriptionRecord{Guid: s.Guid, BusinessUnitID: s.BusinessUnitID, ReportType: s.ReportType,
		Status: s.Status, Body: string(body), Version: s.Version, CreatedOn: s.CreatedOn, UpdatedOn: s.UpdatedOn}, nil
}

// fromRecord reads a stored subscription.
func fromRecord(r store.ReportSubscriptionRecord) (Subscription, error) {
	var in Input
	if err := json.Unmarshal([]byte(r.Body), &in); err != nil {
		return Subscription{}, fmt.Errorf("stored subscription %s is not JSON: %w", r.Guid, err)
	}
	in.Status = r.Status
	in.BusinessUnitID = r.BusinessUnitID
	return Subscription{Guid: r.Guid, Input: in, Version: r.Version, CreatedOn: r.CreatedOn, UpdatedOn: r.UpdatedOn}, nil
}
