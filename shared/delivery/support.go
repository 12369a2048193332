package delivery

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// SupportStore is what Support needs from SQL.
type SupportStore interface {
	NotificationListUnknown(ctx context.Context, p store.NotificationListUnknownParams) ([]store.NotificationJob, error)
	NotificationResolve(ctx context.Context, p store.NotificationResolveParams) (store.NotificationJob, error)
	NotificationListHeld(ctx context.Context, p store.NotificationListUnknownParams) ([]store.NotificationJob, error)
	NotificationRelease(ctx context.Context, p store.NotificationReleaseParams) (store.NotificationJob, error)
	DeliveryCountsByDay(ctx context.Context, p store.DeliveryCountsParams) (store.DeliveryCounts, error)
}

// Support is the support side of delivery (docs/operations.md#support-api): the manual-resolution queue of UNKNOWN
// outcomes and the delivery counts per business unit and local day. Every method is scoped
// to one business unit; a delivery of another unit is store.ErrNotFound.
type Support struct {
	Store SupportStore
	Clock automation.Clock
	Log   *slog.Logger // the audit line of a release; may be nil
	// Units, when set, is where a business unit is looked up: one that does not exist
	// answers store.ErrNotFound (404) on the lists and counts, not an empty page that looks
	// like a healthy unit (issue 33: a typo in businessUnitId). nil: not checked.
	Units UnitReader
}

// UnitReader looks a business unit up (store.ErrNotFound when it does not exist).
type UnitReader interface {
	BusinessUnitGet(ctx context.Context, id string) (store.BusinessUnit, error)
}

// known answers store.ErrNotFound for a business unit that does not exist (Units set).
func (s *Support) known(ctx context.Context, businessUnitID string) error {
	if s.Units == nil {
		return nil
	}
	if _, err := s.Units.BusinessUnitGet(ctx, businessUnitID); errors.Is(err, store.ErrNotFound) {
		return automation.Errorf(automation.CodeNotFound, "business unit %q not found", businessUnitID)
	} else if err != nil {
		return err
	}
	return nil
}

// MaxCountDays bounds one counts request (inclusive days).
const MaxCountDays = 366

// DefaultUnknownPage and MaxUnknownPage bound a page of the manual-resolution queue.
const (
	DefaultUnknownPage = 50
	MaxUnknownPage     = 500
)

// UnknownDelivery is one entry of the manual-resolution queue.
type UnknownDelivery struct {
	DeliveryKey    string    `json:"deliveryKey"`
	SchedulerKey   string    `json:"schedulerKey"`
	BusinessUnitID string    `json:"businessUnitId"`
	Channel        string    `json:"channel"`
	Recipient      string    `json:"recipient"`
	Template       string    `json:"template"`
	LocalDate      string    `json:"localDate"`
	AttemptCount   int       `json:"attemptCount"`
	LastError      string    `json:"lastError,omitempty"`
	Version        int64     `json:"version"` // send it back to resolve (If-Match)
	UpdatedOn      time.Time `json:"updatedOn"`
}

// UnknownPage is one page of the queue; NextAfter is the cursor of the next page (0: none).
type UnknownPage struct {
	Items     []UnknownDelivery `json:"items"`
	NextAfter int64             `json:"-"`
}

// ListUnknown returns up to limit (default 50, at most 500) UNKNOWN deliveries of the
// business unit awaiting manual resolution, oldest first, after the cursor afterID (0: from
// the start). Errors: automation.Invalid for a bad business unit or limit.
func (s *Support) ListUnknown(ctx context.Context, businessUnitID string, afterID int64, limit int) (UnknownPage, error) {
	return s.listPage(ctx, businessUnitID, afterID, limit, s.Store.NotificationListUnknown)
}

// ListHeld returns up to limit (default 50, at most 500) deliveries of the business unit
// that wait Failed on support hold (a template missing for the unit, retries run out),
// oldest first, after the cursor afterID (0: from the start); each is released with
// Release once its cause is fixed. Errors as ListUnknown.
func (s *Support) ListHeld(ctx context.Context, businessUnitID string, afterID int64, limit int) (UnknownPage, error) {
	return s.listPage(ctx, businessUnitID, afterID, limit, s.Store.NotificationListHeld)
}

// listPage checks a list's business unit, cursor and limit (default 50, at most 500), reads
// limit+1 jobs with list and returns a page of them (NextAfter set when there are more).
func (s *Support) listPage(ctx context.Context, businessUnitID string, afterID int64, limit int,
	list func(context.Context, store.NotificationListUnknownParams) ([]store.NotificationJob, error)) (UnknownPage, error) {
	if strings.TrimSpace(businessUnitID) == "" {
		return UnknownPage{}, automation.Invalid("businessUnitId", "is required")
	}
	if limit == 0 {
		limit = DefaultUnknownPage
	}
	if limit < 1 || limit > MaxUnknownPage {
		return UnknownPage{}, automation.Invalid("limit", "must be 1..%d, got %d", MaxUnknownPage, limit)
	}
	if afterID < 0 {
		return UnknownPage{}, automation.Invalid("cursor", "is not valid")
	}
	if err := s.known(ctx, businessUnitID); err != nil {
		return UnknownPage{}, err
	}
	jobs, err := list(ctx, store.NotificationListUnknownParams{BusinessUnitID: businessUnitID, AfterID: afterID, Limit: limit + 1})
	if err != nil {
		return UnknownPage{}, err
	}
	page := UnknownPage{Items: []UnknownDelivery{}}
	for i, j := range jobs {
		if i == limit {
			page.NextAfter = jobs[i-1].ID
			break
		}
		page.Items = append(page.Items, UnknownDelivery{DeliveryKey: j.DeliveryKey, SchedulerKey: j.SchedulerKey, BusinessUnitID: j.BusinessUnitID,
			Channel: j.Channel, Recipient: j.Recipient, Template: j.Template, LocalDate: j.LocalDate, AttemptCount: j.AttemptCount,
			LastError: j.LastError, Version: j.Version, UpdatedOn: j.UpdatedOn})
	}
	return page, nil
}

// ReleaseRequest releases one delivery held Failed on support hold.
type ReleaseRequest struct {
	BusinessUnitID  string
	DeliveryKey     string
	ExpectedVersion int64  // the Version the operator saw
	Operator        string // who releases it (audited: logged)
	Reason          string // why (audited: logged), at most MaxResolutionReason characters
}

// checkDeliveryRef refuses (automation.Invalid, naming the member) a support action without
// a business unit or whose deliveryKey is not a delivery key ("dlv_…").
func checkDeliveryRef(businessUnitID, deliveryKey string) error {
	if strings.TrimSpace(businessUnitID) == "" {
		return automation.Invalid("businessUnitId", "is required")
	}
	if !strings.HasPrefix(deliveryKey, "dlv_") {
		return automation.Invalid("deliveryKey", "is not a delivery key")
	}
	return nil
}

// Release puts a delivery held Failed on support hold (its cause fixed: the template saved
// for the unit) back in line: Queued and due now, so the dispatcher's sweep sends it once
// (its delivery key and effect key unchanged: the channel's idempotency holds). The
// operator and reason are logged. Errors: automation.Invalid (nothing changed) for a missing
// field or an over-long reason; store.ErrNotFound when the delivery does not exist in the
// business unit; store.ErrConflict when it is not held Failed (released already, say);
// store.ErrLeaseLost when its Version moved on.
func (s *Support) Release(ctx context.Context, r ReleaseRequest) (store.NotificationJob, error) {
	if err := checkDeliveryRef(r.BusinessUnitID, r.DeliveryKey); err != nil {
		return store.NotificationJob{}, err
	}
	switch {
	case r.ExpectedVersion <= 0:
		return store.NotificationJob{}, automation.Invalid("version", "is required (the version listed)")
	case utf16Len(r.Reason) > MaxResolutionReason:
		return store.NotificationJob{}, automation.Invalid("reason", "is longer than %d characters", MaxResolutionReason)
	}
	op, reason, err := automation.CheckAudit(r.Operator, r.Reason)
	if err != nil {
		return store.NotificationJob{}, err
	}
	j, err := s.Store.NotificationRelease(ctx, store.NotificationReleaseParams{DeliveryKey: r.DeliveryKey, BusinessUnitID: r.BusinessUnitID,
		ExpectedVersion: r.ExpectedVersion, Now: s.Clock.Now()})
	if err != nil {
		return j, err
	}
	if s.Log != nil {
		s.Log.InfoContext(ctx, "delivery released from support hold", "deliveryKey", j.DeliveryKey, "businessUnitId", j.BusinessUnitID,
			"operator", op, "reason", reason, "version", j.Version)
	}
	return j, nil
}

// MaxResolutionReason bounds ResolveRequest.Reason, in characters (UTF-16 code units, as
// SQL Server's nvarchar counts them).
const MaxResolutionReason = 1000

// utf16Len is the length of v in UTF-16 code units.
func utf16Len(v string) int {
	n := 0
	for _, r := range v {
		n += utf16.RuneLen(r)
	}
	return n
}

// ResolveRequest resolves one UNKNOWN delivery by hand.
type ResolveRequest struct {
	BusinessUnitID    string
	DeliveryKey       string
	ExpectedVersion   int64                    // the Version the operator saw
	Status            store.NotificationStatus // Sent or Failed
	Operator          string                   // who resolves it (audited)
	Reason            string                   // why (audited), at most MaxResolutionReason characters
	ProviderReference string                   // optional, at most store.MaxProviderReference characters
}

// Resolve records the operator's verdict on an UNKNOWN delivery, with its fact, guarded by
// ExpectedVersion. Errors: automation.Invalid (nothing changed) for a missing field, a
// status other than Sent/Failed or an over-long reason or provider reference; store.ErrNotFound when the delivery does not exist in the
// business unit; store.ErrConflict when it is no longer Unknown; store.ErrLeaseLost when its
// Version moved on (someone else changed it since it was listed).
func (s *Support) Resolve(ctx context.Context, r ResolveRequest) (store.NotificationJob, error) {
	if err := checkDeliveryRef(r.BusinessUnitID, r.DeliveryKey); err != nil {
		return store.NotificationJob{}, err
	}
	switch {
	case r.Status != store.NotificationSent && r.Status != store.NotificationFailed:
		return store.NotificationJob{}, automation.Invalid("status", "must be %q or %q, got %q", store.NotificationSent, store.NotificationFailed, r.Status)
	case r.ExpectedVersion <= 0:
		return store.NotificationJob{}, automation.Invalid("version", "is required (the version listed)")
	case utf16Len(r.Reason) > MaxResolutionReason:
		return store.NotificationJob{}, automation.Invalid("reason", "is longer than %d characters", MaxResolutionReason)
	case utf16Len(r.ProviderReference) > store.MaxProviderReference:
		return store.NotificationJob{}, automation.Invalid("providerReference", "is longer than %d characters", store.MaxProviderReference)
	}
	op, reason, err := automation.CheckAudit(r.Operator, r.Reason) // the audit rule of every person's action
	if err != nil {
		return store.NotificationJob{}, err
	}
	return s.Store.NotificationResolve(ctx, store.NotificationResolveParams{DeliveryKey: r.DeliveryKey, BusinessUnitID: r.BusinessUnitID,
		ExpectedVersion: r.ExpectedVersion, Status: r.Status, Operator: op, Reason: reason,
		ProviderReference: r.ProviderReference, Now: s.Clock.Now()})
}

// Counts returns the sent/failed/unknown counts of the business unit per local day from..to
// (inclusive, YYYY-MM-DD, at most MaxCountDays days), with the instant the data is fresh to.
// Errors: automation.Invalid for a bad business unit or range.
func (s *Support) Counts(ctx context.Context, businessUnitID, from, to string) (store.DeliveryCounts, error) {
	if strings.TrimSpace(businessUnitID) == "" {
		return store.DeliveryCounts{}, automation.Invalid("businessUnitId", "is required")
	}
	if err := s.known(ctx, businessUnitID); err != nil {
		return store.DeliveryCounts{}, err
	}
	f, err := time.Parse("2006-01-02", from)
	if err != nil {
		return store.DeliveryCounts{}, automation.Invalid("from", "must be a date YYYY-MM-DD, got %q", from)
	}
	t, err := time.Parse("2006-01-02", to)
	if err != nil {
		return store.DeliveryCounts{}, automation.Invalid("to", "must be a date YYYY-MM-DD, got %q", to)
	}
	if t.Before(f) {
		return store.DeliveryCounts{}, automation.Invalid("to", "is before from")
	}
	if days := int(t.Sub(f).Hours()/24) + 1; days > MaxCountDays {
		return store.DeliveryCounts{}, automation.Invalid("to", "the range is %d days, at most %d", days, MaxCountDays)
	}
	return s.Store.DeliveryCountsByDay(ctx, store.DeliveryCountsParams{BusinessUnitID: businessUnitID, From: from, To: to})
}
