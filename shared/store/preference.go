package store

import (
	"context"
	"time"
)

// Recipient preference bounds (docs/channels.md#recipient-preferences).
const (
	// MaxRecipientIDLength bounds a preference's or quiet-hours row's recipient id, in
	// characters: an e-mail address's bound (RFC 5321 paths are at most 256 octets with the
	// angle brackets), which also holds an E.164 number and a customer id.
	MaxRecipientIDLength = 254
	// MaxPreferencesPerRecipient bounds the rows one recipient has in one unit (channels ×
	// categories); PreferenceSet refuses more (ErrConflict).
	MaxPreferencesPerRecipient = 200
)

// RecipientPreference is a recipient's choice for one channel and category in one business
// unit (the RecipientPreference table). No row means opted in (the default).
type RecipientPreference struct {
	BusinessUnitID string
	RecipientID    string // the delivery's recipient, trimmed and lower-cased
	Channel        string
	Category       string
	OptedIn        bool
	Source         string    // where the change came from: "api", "sms-stop", "list-unsubscribe"
	ChangedBy      string    // the operator, the number that sent STOP, or "recipient"
	ChangedOn      time.Time // UTC
	Version        int64     // 1 on insert, +1 per change
}

// PreferenceSetParams sets (inserts or changes) the preferences of one recipient at Now in
// one transaction. A row whose OptedIn is already the stored value is left as it is (its
// Source, ChangedOn and Version keep the change that set it), so repeating a change is
// idempotent.
type PreferenceSetParams struct {
	BusinessUnitID string
	RecipientID    string
	Items          []RecipientPreference // Channel, Category, OptedIn, Source, ChangedBy; at most MaxPreferencesPerRecipient
	Now            time.Time             // UTC
}

// QuietHoursRow is a business unit's quiet-hours window (RecipientID "") or one recipient's
// (the QuietHours table). Start and End are local wall times "HH:MM", both set or both
// empty (a recipient's row without a window takes the unit's); TimeZoneID "" takes the
// unit's zone.
type QuietHoursRow struct {
	BusinessUnitID string
	RecipientID    string
	Start, End     string
	TimeZoneID     string
	ChangedBy      string
	ChangedOn      time.Time // UTC
	Version        int64
}

// PreferenceStore holds recipient preferences and quiet hours (docs/channels.md#recipient-preferences).
type PreferenceStore interface {
	// PreferenceSet writes p's items in one transaction (all or nothing) and returns the
	// recipient's rows after it. More than MaxPreferencesPerRecipient rows for the
	// recipient would be ErrConflict, nothing written.
	PreferenceSet(ctx context.Context, p PreferenceSetParams) ([]RecipientPreference, error)
	// PreferenceList returns one recipient's rows in a unit, by channel then category (at
	// most MaxPreferencesPerRecipient; none: every channel and category is opted in).
	PreferenceList(ctx context.Context, businessUnitID, recipientID string) ([]RecipientPreference, error)
	// QuietHoursPut stores r (inserted, or replacing the row of its unit and recipient;
	// Version +1) and returns it as stored.
	QuietHoursPut(ctx context.Context, r QuietHoursRow) (QuietHoursRow, error)
	// QuietHoursGet returns the unit's row (RecipientID "") or a recipient's; ErrNotFound
	// when there is none.
	QuietHoursGet(ctx context.Context, businessUnitID, recipientID string) (QuietHoursRow, error)
	// QuietHoursDelete removes the row; ErrNotFound when there was none. A non-nil audit is
	// inserted into OperatorAudit in the delete's transaction, only when a row was removed;
	// an invalid audit refuses the delete.
	QuietHoursDelete(ctx context.Context, businessUnitID, recipientID string, audit *OperatorAudit) error
}
