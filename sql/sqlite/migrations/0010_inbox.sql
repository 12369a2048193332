-- +goose Up
-- The in-app inbox channel (docs/inbox.md): one row per message and recipient. DeliveryKey is
-- the delivery's idempotency key (a resend stores nothing); Seq numbers a recipient's
-- messages 1, 2, 3, … in commit order (writers are serialised by BEGIN IMMEDIATE): the list
-- cursor and the stream's event id. Instants are INTEGER milliseconds since the Unix epoch, UTC.
CREATE TABLE InboxMessage (
    Id             INTEGER PRIMARY KEY AUTOINCREMENT,
    BusinessUnitId TEXT    NOT NULL,
    RecipientId    TEXT    NOT NULL,
    Seq            INTEGER NOT NULL CHECK (Seq > 0),
    DeliveryKey    TEXT    NOT NULL,
    Template       TEXT    NOT NULL,
    Subject        TEXT    NOT NULL,
    TextBody       TEXT    NOT NULL,
    HtmlBody       TEXT    NOT NULL,
    PayloadJson    TEXT    NULL,
    CreatedOn      INTEGER NOT NULL,
    ReadOn         INTEGER NULL,
    Version        INTEGER NOT NULL DEFAULT 1,
    CONSTRAINT UQ_InboxMessage_DeliveryKey UNIQUE (DeliveryKey),
    CONSTRAINT UQ_InboxMessage_Recipient UNIQUE (BusinessUnitId, RecipientId, Seq)
);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
