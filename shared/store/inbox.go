package store

import (
	"context"
	"time"
)

// InboxState filters inbox messages by whether they were read.
type InboxState string

// Inbox states.
const (
	InboxAll    InboxState = "all"
	InboxUnread InboxState = "unread"
	InboxRead   InboxState = "read"
)

// InboxMessage is one in-app message of one recipient (the InboxMessage table,
// docs/inbox.md). Seq numbers a recipient's messages 1, 2, 3, … within its business unit in
// commit order: the list cursor, the stream's event id and the message's id in the HTTP API.
type InboxMessage struct {
	ID             int64 // global row id (internal)
	BusinessUnitID string
	RecipientID    string
	Seq            int64
	DeliveryKey    string // UNIQUE: the idempotency key of the delivery that stored it
	Template       string
	Subject        string
	Text           string
	HTML           string
	PayloadJSON    string     // the delivery's render data ("" when none)
	CreatedOn      time.Time  // UTC, the dispatcher's send instant
	ReadOn         *time.Time // UTC; nil = unread
	Version        int64      // 1 when stored, +1 when marked read
}

// InboxInsertParams stores one message. The message's Seq is the recipient's highest + 1,
// assigned in the same transaction.
type InboxInsertParams struct {
	BusinessUnitID string
	RecipientID    string
	DeliveryKey    string
	Template       string
	Subject        string
	Text           string
	HTML           string
	PayloadJSON    string
	Now            time.Time // UTC: CreatedOn
}

// InboxInsertResult is the stored message; Inserted is false when the delivery key was
// stored before (a resend: nothing written).
type InboxInsertResult struct {
	Message  InboxMessage
	Inserted bool
}

// InboxListParams pages one recipient's messages newest first: Seq < BeforeSeq (0 = from the
// newest), filtered by State (""= all), at most Limit (1..MaxBatch).
type InboxListParams struct {
	BusinessUnitID string
	RecipientID    string
	State          InboxState
	BeforeSeq      int64
	Limit          int
}

// InboxListAfterParams reads one recipient's messages oldest first with Seq > AfterSeq, at
// most Limit (1..MaxBatch): the stream's replay.
type InboxListAfterParams struct {
	BusinessUnitID string
	RecipientID    string
	AfterSeq       int64
	Limit          int
}

// InboxMarkReadParams marks the message (BusinessUnitID, RecipientID, Seq) read at Now if its
// Version is still Version.
type InboxMarkReadParams struct {
	BusinessUnitID string
	RecipientID    string
	Seq            int64
	Version        int64
	Now            time.Time // UTC
}

// InboxStore is the InboxMessage table of the in-app inbox channel (docs/inbox.md).
type InboxStore interface {
	// InboxInsert stores a message unless its DeliveryKey is stored already, in one
	// transaction. ErrConflict when the key is stored for another business unit or recipient
	// (a delivery key names its recipient, so that is never a resend).
	InboxInsert(ctx context.Context, p InboxInsertParams) (InboxInsertResult, error)
	// InboxList returns up to Limit messages newest first (Seq descending).
	InboxList(ctx context.Context, p InboxListParams) ([]InboxMessage, error)
	// InboxListAfter returns up to Limit messages oldest first (Seq ascending).
	InboxListAfter(ctx context.Context, p InboxListAfterParams) ([]InboxMessage, error)
	// InboxGet returns one message, or ErrNotFound.
	InboxGet(ctx context.Context, businessUnitID, recipientID string, seq int64) (InboxMessage, error)
	// InboxMarkRead sets ReadOn (and Version+1) of an unread message whose Version is
	// p.Version and returns it; a message read already with that Version is returned as it
	// is (ReadOn keeps the first read). ErrNotFound when no such message, ErrLeaseLost when
	// its Version is not p.Version.
	InboxMarkRead(ctx context.Context, p InboxMarkReadParams) (InboxMessage, error)
}
