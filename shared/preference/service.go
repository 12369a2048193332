package preference

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/quiethours"
	"github.com/automation-platform/automation/shared/store"
)

// Channels are the channel names a preference may name (the dispatcher's channels,
// docs/channels.md).
var Channels = []string{"email", "inbox", "log", "push", "sms", "webhook", "whatsapp"}

// QuietChannels are the channels quiet hours hold: those that reach a person's phone or
// mailbox. The in-app inbox, webhooks (systems) and log lines are not held.
var QuietChannels = []string{"email", "push", "sms", "whatsapp"}

func quietChannel(c string) bool {
	for _, k := range QuietChannels {
		if k == c {
			return true
		}
	}
	return false
}

// Sources of a preference change.
const (
	SourceAPI             = "api"
	SourceSMSStop         = "sms-stop"
	SourceListUnsubscribe = "list-unsubscribe"
)

// Store is what the service needs.
type Store interface {
	store.PreferenceStore
	BusinessUnitGet(ctx context.Context, id string) (store.BusinessUnit, error)
}

// Service reads and changes preferences and quiet hours and decides deliveries
// (delivery.Gate).
type Service struct {
	Store    Store
	Registry Registry
	Clock    automation.Clock
	// UnitCacheTTL is how long a business unit's quiet-hours row and zone are reused by
	// Check (default 30 s; negative: never cached). A unit's change applies within it; a
	// recipient's preferences and window are read for every delivery.
	UnitCacheTTL time.Duration
	// UnsubscribeURL is the public https address of the one-click unsubscribe route
	// ("https://<app>.azurewebsites.net/api/unsubscribe"); with UnsubscribeSecret set, a
	// marketing e-mail carries it with a signed token (List-Unsubscribe, RFC 8058). Empty:
	// no link.
	UnsubscribeURL    string
	UnsubscribeSecret []byte

	mu    sync.Mutex
	units map[string]unitEntry // bounded by maxCachedUnits
}

const maxCachedUnits = 1000

type unitEntry struct {
	row    *store.QuietHoursRow // nil: the unit has no window
	zone   string               // the unit's own zone
	readAt time.Time
}

var _ delivery.Gate = (*Service)(nil)

// NormalizeRecipient is the recipient id of an address: trimmed and lower-cased.
func NormalizeRecipient(r string) string { return strings.ToLower(strings.TrimSpace(r)) }

// ValidateRecipientID checks a recipient id: 1..store.MaxRecipientIDLength characters, no
// control character, space or '/'. Errors name field.
func ValidateRecipientID(field, id string) error {
	n := utf8.RuneCountInString(id)
	if n == 0 || n > store.MaxRecipientIDLength || strings.ContainsFunc(id, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) || r == '/' }) {
		return automation.Invalid(field, "a recipient id is 1..%d characters without spaces, control characters or '/'", store.MaxRecipientIDLength)
	}
	return nil
}

func knownChannel(c string) bool {
	for _, k := range Channels {
		if k == c {
			return true
		}
	}
	return false
}

// Item is one preference in a change: OptedIn is required.
type Item struct {
	Channel  string `json:"channel"`
	Category string `json:"category"`
	OptedIn  *bool  `json:"optedIn"`
}

// QuietHoursInput is a window: Start and End local wall times "HH:MM", TimeZoneID an IANA
// zone ("" = the recipient's row: the unit's window's zone; the unit's row: the unit's zone).
// On a recipient, all three empty removes the recipient's own row.
type QuietHoursInput struct {
	Start      string `json:"start"`
	End        string `json:"end"`
	TimeZoneID string `json:"timeZoneId"`
}

// Change is a PUT of a recipient's preferences: the items to set and, when not nil, the
// recipient's quiet hours.
type Change struct {
	Preferences []Item           `json:"preferences"`
	QuietHours  *QuietHoursInput `json:"quietHours,omitempty"`
}

// View is a recipient's stored preferences and quiet hours.
type View struct {
	BusinessUnitID string           `json:"businessUnitId"`
	RecipientID    string           `json:"recipientId"`
	Preferences    []PreferenceView `json:"preferences"`
	QuietHours     *QuietHoursView  `json:"quietHours"`
	Categories     []CategoryView   `json:"categories"`
}

// PreferenceView is one stored preference (no row: opted in).
type PreferenceView struct {
	Channel   string    `json:"channel"`
	Category  string    `json:"category"`
	OptedIn   bool      `json:"optedIn"`
	Source    string    `json:"source"`
	ChangedBy string    `json:"changedBy"`
	ChangedOn time.Time `json:"changedOn"`
	Version   int64     `json:"version"`
}

// QuietHoursView is a stored window ("" ends: the unit's window; "" zone: see QuietHoursInput).
type QuietHoursView struct {
	Start      string    `json:"start,omitempty"`
	End        string    `json:"end,omitempty"`
	TimeZoneID string    `json:"timeZoneId,omitempty"`
	ChangedBy  string    `json:"changedBy"`
	ChangedOn  time.Time `json:"changedOn"`
	Version    int64     `json:"version"`
}

// CategoryView is a known category.
type CategoryView struct {
	Name          string `json:"name"`
	Transactional bool   `json:"transactional"`
}

func (s *Service) categories() []CategoryView {
	var out []CategoryView
	for _, n := range s.Registry.Names() {
		c, _ := s.Registry.Lookup(n)
		out = append(out, CategoryView{Name: c.Name, Transactional: c.Transactional})
	}
	return out
}

func qhView(r store.QuietHoursRow) *QuietHoursView {
	return &QuietHoursView{Start: r.Start, End: r.End, TimeZoneID: r.TimeZoneID, ChangedBy: r.ChangedBy, ChangedOn: r.ChangedOn, Version: r.Version}
}

// Get returns recipient's view in unit bu. recipient is normalised; a bad one is
// CodeInvalidInput naming recipientId.
func (s *Service) Get(ctx context.Context, bu, recipient string) (View, error) {
	recipient = NormalizeRecipient(recipient)
	if err := ValidateRecipientID("recipientId", recipient); err != nil {
		return View{}, err
	}
	rows, err := s.Store.PreferenceList(ctx, bu, recipient)
	if err != nil {
		return View{}, err
	}
	v := View{BusinessUnitID: bu, RecipientID: recipient, Preferences: []PreferenceView{}, Categories: s.categories()}
	for _, r := range rows {
		v.Preferences = append(v.Preferences, PreferenceView{Channel: r.Channel, Category: r.Category, OptedIn: r.OptedIn, Source: r.Source,
			ChangedBy: r.ChangedBy, ChangedOn: r.ChangedOn, Version: r.Version})
	}
	q, err := s.Store.QuietHoursGet(ctx, bu, recipient)
	switch {
	case err == nil:
		v.QuietHours = qhView(q)
	case !errors.Is(err, store.ErrNotFound):
		return View{}, err
	}
	return v, nil
}

// Set applies c to recipient in unit bu on behalf of operator, with source. Bad input is
// one CodeInvalidInput error naming every member (preferences[i].channel, .category,
// .optedIn, quietHours.start, .end, .timeZoneId) and nothing is written: an unknown channel
// or category, a missing optedIn, an opt-out of a transactional category (it is not
// subject to marketing opt-out; storing it would be an opt-out silently ignored), a bad
// window. Setting what is stored already changes nothing.
func (s *Service) Set(ctx context.Context, bu, recipient, operator, source string, c Change) (View, error) {
	recipient = NormalizeRecipient(recipient)
	var errs []error
	if err := ValidateRecipientID("recipientId", recipient); err != nil {
		errs = append(errs, err)
	}
	if len(c.Preferences) > store.MaxPreferencesPerRecipient {
		errs = append(errs, automation.Invalid("preferences", "at most %d items, got %d", store.MaxPreferencesPerRecipient, len(c.Preferences)))
	}
	var items []store.RecipientPreference
	seen := map[[2]string]bool{}
	for i, it := range c.Preferences {
		f := fmt.Sprintf("preferences[%d]", i)
		if !knownChannel(it.Channel) {
			errs = append(errs, automation.Invalid(f+".channel", "unknown channel %q: one of %s", it.Channel, strings.Join(Channels, ", ")))
		}
		cat, ok := s.Registry.Lookup(it.Category)
		if !ok {
			errs = append(errs, automation.Invalid(f+".category", "unknown category %q: one of %s", it.Category, strings.Join(s.Registry.Names(), ", ")))
		}
		if it.OptedIn == nil {
			errs = append(errs, automation.Invalid(f+".optedIn", "is required (true or false)"))
		} else if ok && cat.Transactional && !*it.OptedIn {
			errs = append(errs, automation.Invalid(f+".optedIn", "category %q is transactional: it is not subject to marketing opt-out", it.Category))
		}
		if seen[[2]string{it.Channel, it.Category}] {
			errs = append(errs, automation.Invalid(f, "channel %q and category %q twice", it.Channel, it.Category))
		}
		seen[[2]string{it.Channel, it.Category}] = true
		if it.OptedIn != nil {
			items = append(items, store.RecipientPreference{Channel: it.Channel, Category: it.Category, OptedIn: *it.OptedIn, Source: source, ChangedBy: operator})
		}
	}
	var qh *store.QuietHoursRow
	remove := false
	if c.QuietHours != nil {
		in := *c.QuietHours
		if in.Start == "" && in.End == "" && in.TimeZoneID == "" {
			remove = true
		} else {
			row, err := windowRow(in, true)
			if err != nil {
				errs = append(errs, err)
			}
			qh = &row
		}
	}
	if err := automation.InvalidFields(errs...); err != nil {
		return View{}, err
	}
	now := s.Clock.Now().UTC()
	if len(items) > 0 {
		if _, err := s.Store.PreferenceSet(ctx, store.PreferenceSetParams{BusinessUnitID: bu, RecipientID: recipient, Items: items, Now: now}); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return View{}, automation.Errorf(automation.CodeConflict, "recipient %q would have more than %d preferences", recipient, store.MaxPreferencesPerRecipient)
			}
			return View{}, err
		}
	}
	switch {
	case qh != nil:
		qh.BusinessUnitID, qh.RecipientID, qh.ChangedBy, qh.ChangedOn = bu, recipient, operator, now
		if _, err := s.Store.QuietHoursPut(ctx, *qh); err != nil {
			return View{}, err
		}
	case remove:
		// Removing the recipient's window takes the row that named its last writer, so the
		// operator goes to OperatorAudit in the delete's transaction (none when there was no window).
		audit := &store.OperatorAudit{At: now, BusinessUnitID: bu, Action: store.AuditQuietHoursDelete,
			Target: store.AuditRecipientTarget(recipient), Operator: store.AuditOperator(operator)}
		if err := s.Store.QuietHoursDelete(ctx, bu, recipient, audit); err != nil && !errors.Is(err, store.ErrNotFound) {
			return View{}, err
		}
	}
	return s.Get(ctx, bu, recipient)
}

// windowRow checks a window input: on a recipient (recipient true) the ends may both be
// empty (the unit's window) when a zone is given; otherwise both ends are required, differ,
// and the zone (if given) exists. Errors name the members as the caller sent them: within
// a recipient's body quietHours.start, .end, .timeZoneId; the unit's route takes the window
// as its whole body, so there start, end, timeZoneId.
func windowRow(in QuietHoursInput, recipient bool) (store.QuietHoursRow, error) {
	var errs []error
	member := func(name string) string { return name }
	if recipient {
		member = func(name string) string { return "quietHours." + name }
	}
	row := store.QuietHoursRow{TimeZoneID: in.TimeZoneID}
	if in.TimeZoneID != "" {
		if _, err := localtime.LoadZone(in.TimeZoneID); err != nil {
			errs = append(errs, automation.Invalid(member("timeZoneId"), "zone %q does not exist", in.TimeZoneID))
		}
	}
	if recipient && in.Start == "" && in.End == "" {
		return row, automation.InvalidFields(errs...)
	}
	start, serr := localtime.ParseTimeOfDay(in.Start)
	if serr != nil {
		errs = append(errs, automation.Invalid(member("start"), "%q is not a local time HH:MM", in.Start))
	}
	end, eerr := localtime.ParseTimeOfDay(in.End)
	if eerr != nil {
		errs = append(errs, automation.Invalid(member("end"), "%q is not a local time HH:MM", in.End))
	}
	if serr == nil && eerr == nil && start == end {
		errs = append(errs, automation.Invalid(member("end"), "equals the start (%s): a window needs two different ends", start))
	}
	row.Start, row.End = start.String(), end.String()
	return row, automation.InvalidFields(errs...)
}

// UnitQuietHours returns unit bu's window (CodeNotFound when it has none).
func (s *Service) UnitQuietHours(ctx context.Context, bu string) (QuietHoursView, error) {
	r, err := s.Store.QuietHoursGet(ctx, bu, "")
	if errors.Is(err, store.ErrNotFound) {
		return QuietHoursView{}, automation.Errorf(automation.CodeNotFound, "business unit %q has no quiet hours", bu)
	}
	if err != nil {
		return QuietHoursView{}, err
	}
	return *qhView(r), nil
}

// SetUnitQuietHours stores unit bu's window. Errors: CodeInvalidInput naming start, end
// (equal ends) or timeZoneId (a zone that does not exist), the members of the window body;
// nothing is written.
func (s *Service) SetUnitQuietHours(ctx context.Context, bu, operator string, in QuietHoursInput) (QuietHoursView, error) {
	row, err := windowRow(in, false)
	if err != nil {
		return QuietHoursView{}, err
	}
	row.BusinessUnitID, row.ChangedBy, row.ChangedOn = bu, operator, s.Clock.Now().UTC()
	out, err := s.Store.QuietHoursPut(ctx, row)
	if err != nil {
		return QuietHoursView{}, err
	}
	s.forget(bu)
	return *qhView(out), nil
}

// DeleteUnitQuietHours removes unit bu's window (CodeNotFound when it had none) and records
// operator (the caller's principal first) in OperatorAudit, in the delete's transaction
// (docs/security.md#audit); a delete of no window records nothing.
func (s *Service) DeleteUnitQuietHours(ctx context.Context, bu, operator string) error {
	err := s.Store.QuietHoursDelete(ctx, bu, "", &store.OperatorAudit{At: s.Clock.Now().UTC(), BusinessUnitID: bu,
		Action: store.AuditQuietHoursDelete, Target: bu, Operator: store.AuditOperator(operator)})
	s.forget(bu)
	if errors.Is(err, store.ErrNotFound) {
		return automation.Errorf(automation.CodeNotFound, "business unit %q has no quiet hours", bu)
	}
	return err
}

// OptOut opts recipient out of every category that is not transactional on channel, with
// source and by (idempotent: what is opted out already is left as it is). It is what an
// SMS STOP (channel sms) and a one-click unsubscribe without a category do.
func (s *Service) OptOut(ctx context.Context, bu, recipient, channel, category, source, by string) error {
	recipient = NormalizeRecipient(recipient)
	if err := ValidateRecipientID("recipientId", recipient); err != nil {
		return err
	}
	var items []store.RecipientPreference
	for _, n := range s.Registry.Names() {
		c, _ := s.Registry.Lookup(n)
		if c.Transactional || (category != "" && c.Name != category) {
			continue
		}
		items = append(items, store.RecipientPreference{Channel: channel, Category: c.Name, OptedIn: false, Source: source, ChangedBy: by})
	}
	if len(items) == 0 {
		return automation.Invalid("category", "no marketing category %q", category)
	}
	_, err := s.Store.PreferenceSet(ctx, store.PreferenceSetParams{BusinessUnitID: bu, RecipientID: recipient, Items: items, Now: s.Clock.Now().UTC()})
	return err
}

// Check implements delivery.Gate (the rule in the package doc).
func (s *Service) Check(ctx context.Context, job store.NotificationJob, now time.Time) (delivery.GateDecision, error) {
	cat, _ := s.Registry.Of(job.Template, job.PayloadJSON)
	if cat.Transactional {
		return delivery.GateDecision{}, nil
	}
	recipient := NormalizeRecipient(job.Recipient)
	if utf8.RuneCountInString(recipient) > store.MaxRecipientIDLength {
		return delivery.GateDecision{}, nil // no preference can be stored for it
	}
	prefs, err := s.Store.PreferenceList(ctx, job.BusinessUnitID, recipient)
	if err != nil {
		return delivery.GateDecision{}, err
	}
	for _, p := range prefs {
		if p.Channel == job.Channel && p.Category == cat.Name && !p.OptedIn {
			return delivery.GateDecision{Skip: true, Since: p.ChangedOn.UTC(), Reason: fmt.Sprintf("the recipient opted out of %s %s messages (%s, %s)",
				cat.Name, job.Channel, p.Source, p.ChangedOn.UTC().Format(time.RFC3339))}, nil
		}
	}
	if !quietChannel(job.Channel) {
		return s.send(job, cat), nil
	}
	w, ok, err := s.window(ctx, job.BusinessUnitID, recipient, now)
	if err != nil {
		return delivery.GateDecision{}, err
	}
	if !ok {
		return s.send(job, cat), nil
	}
	d, err := w.Decide(now, false)
	if err != nil {
		// A stored window that no longer validates (a zone removed from the tz database):
		// the delivery is not held by a rule that cannot be read.
		return s.send(job, cat), nil
	}
	if !d.Wait {
		return s.send(job, cat), nil
	}
	return delivery.GateDecision{Wait: true, Until: d.Until, Reason: WaitReason(d.Until, w.ZoneID)}, nil
}

// send is the decision to send a marketing delivery: an e-mail carries the one-click
// unsubscribe link of its category when it is configured.
func (s *Service) send(job store.NotificationJob, cat Category) delivery.GateDecision {
	if job.Channel != "email" || s.UnsubscribeURL == "" || len(s.UnsubscribeSecret) == 0 {
		return delivery.GateDecision{}
	}
	tok := UnsubscribeToken(s.UnsubscribeSecret, Unsubscribe{BusinessUnitID: job.BusinessUnitID, RecipientID: job.Recipient, Channel: job.Channel, Category: cat.Name})
	return delivery.GateDecision{ListUnsubscribe: s.UnsubscribeURL + "?token=" + tok}
}

// WaitReason is the explanation of a quiet-hours wait: "waiting for quiet hours to end at
// 2026-10-04 08:00 (Australia/Sydney)", the end in the window's zone.
func WaitReason(until time.Time, zone string) string {
	loc, err := localtime.LoadZone(zone)
	if err != nil {
		loc = time.UTC
	}
	return fmt.Sprintf("waiting for quiet hours to end at %s (%s)", until.In(loc).Format("2006-01-02 15:04"), zone)
}

// window returns the window that applies to recipient: the recipient's ends, else the
// unit's; the recipient's zone, else the unit window's, else the unit's zone. ok is false
// when neither has a window.
func (s *Service) window(ctx context.Context, bu, recipient string, now time.Time) (quiethours.Window, bool, error) {
	u, err := s.unit(ctx, bu, now)
	if err != nil {
		return quiethours.Window{}, false, err
	}
	var start, end, zone string
	if u.row != nil {
		start, end, zone = u.row.Start, u.row.End, u.row.TimeZoneID
	}
	r, err := s.Store.QuietHoursGet(ctx, bu, recipient)
	switch {
	case err == nil:
		if r.Start != "" {
			start, end = r.Start, r.End
		}
		if r.TimeZoneID != "" {
			zone = r.TimeZoneID
		}
	case !errors.Is(err, store.ErrNotFound):
		return quiethours.Window{}, false, err
	}
	if start == "" {
		return quiethours.Window{}, false, nil
	}
	if zone == "" {
		zone = u.zone
	}
	st, err1 := localtime.ParseTimeOfDay(start)
	en, err2 := localtime.ParseTimeOfDay(end)
	if err1 != nil || err2 != nil {
		return quiethours.Window{}, false, nil
	}
	return quiethours.Window{Start: st, End: en, ZoneID: zone}, true, nil
}

// unit returns unit bu's window and zone, cached for UnitCacheTTL.
func (s *Service) unit(ctx context.Context, bu string, now time.Time) (unitEntry, error) {
	ttl := s.UnitCacheTTL
	if ttl == 0 {
		ttl = 30 * time.Second
	}
	if ttl > 0 {
		s.mu.Lock()
		e, ok := s.units[bu]
		s.mu.Unlock()
		if ok && now.Sub(e.readAt) < ttl && !now.Before(e.readAt) {
			return e, nil
		}
	}
	e := unitEntry{readAt: now, zone: "UTC"}
	r, err := s.Store.QuietHoursGet(ctx, bu, "")
	switch {
	case err == nil:
		e.row = &r
	case !errors.Is(err, store.ErrNotFound):
		return unitEntry{}, err
	}
	b, err := s.Store.BusinessUnitGet(ctx, bu)
	switch {
	case err == nil && b.TimeZoneID != "":
		e.zone = b.TimeZoneID
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return unitEntry{}, err
	}
	if ttl > 0 {
		s.mu.Lock()
		if s.units == nil || len(s.units) >= maxCachedUnits {
			s.units = map[string]unitEntry{}
		}
		s.units[bu] = e
		s.mu.Unlock()
	}
	return e, nil
}

func (s *Service) forget(bu string) {
	s.mu.Lock()
	delete(s.units, bu)
	s.mu.Unlock()
}
