-- +goose Up
-- The delivery facts leave the outbox's MessageId index (docs/performance.md, "Delivery facts
-- outside the MessageId index"). A dispatched delivery writes two facts (Sending, then its
-- outcome; docs/architecture.md#facts), each an outbox row whose MessageId
-- ("{DeliveryKey}:r{Revision}") is a random key: two leaf pages of the unique index dirtied
-- per delivery, each a log frame at the commit and a write at the checkpoint.
--
-- A fact needs no unique index to be written once: its row is inserted only in the
-- transaction that moved its job to that Revision, under the job's Version fence, and a
-- Revision is reached once. Every other message (dispatch messages, gateway routes,
-- attribute triggers, campaign and fee messages) keeps its MessageId unique, now through the
-- partial unique index UX_Outbox_MessageId; the queries that rely on it name its WHERE.
--
-- SQLite cannot drop a column's UNIQUE constraint in place: Outbox is rebuilt with every row,
-- Id and its AUTOINCREMENT sequence; nothing references it.
CREATE TABLE Outbox_0026 (
    Id          INTEGER PRIMARY KEY AUTOINCREMENT,
    MessageId   TEXT    NOT NULL,
    Destination TEXT    NOT NULL,
    SessionId   TEXT    NULL,
    Body        BLOB    NOT NULL,
    CreatedOn   INTEGER NOT NULL,
    PublishedOn INTEGER NULL,
    Attempts    INTEGER NOT NULL DEFAULT 0,
    LeaseUntil  INTEGER NULL,
    ClaimToken  TEXT    NULL,
    RetryAt     INTEGER NULL
);
INSERT INTO Outbox_0026 (Id, MessageId, Destination, SessionId, Body, CreatedOn, PublishedOn, Attempts, LeaseUntil, ClaimToken, RetryAt)
SELECT Id, MessageId, Destination, SessionId, Body, CreatedOn, PublishedOn, Attempts, LeaseUntil, ClaimToken, RetryAt
FROM Outbox ORDER BY Id;
-- The old table's sequence, not the highest Id copied: an Id is never handed out twice.
DELETE FROM sqlite_sequence WHERE name = 'Outbox_0026';
INSERT INTO sqlite_sequence (name, seq) SELECT 'Outbox_0026', seq FROM sqlite_sequence WHERE name = 'Outbox';
DROP TABLE Outbox;
ALTER TABLE Outbox_0026 RENAME TO Outbox;

CREATE UNIQUE INDEX UX_Outbox_MessageId ON Outbox (MessageId) WHERE Destination <> 'delivery-facts';
-- The indexes of the table before, unchanged (0001, 0009, 0012).
CREATE INDEX IX_Outbox_Unpublished ON Outbox (Id) WHERE PublishedOn IS NULL;
CREATE INDEX IX_Outbox_UnpublishedByDestination ON Outbox (Destination, Id) WHERE PublishedOn IS NULL;
CREATE INDEX IX_Outbox_Published ON Outbox (PublishedOn) WHERE PublishedOn IS NOT NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
