-- +goose Up
-- The event gateway (docs/gateway.md): the versioned event registry and the (source, id)
-- ledger of accepted events. Instants are INTEGER milliseconds since the Unix epoch, UTC.
-- Every version of a definition is kept; Seq grows with every save and the highest is the
-- registry version in force (one seek on the primary key, polled by the hot reload).
CREATE TABLE EventRegistry (
    Seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    EventType      TEXT    NOT NULL,
    Version        INTEGER NOT NULL,
    DefinitionJson TEXT    NOT NULL,
    Operator       TEXT    NOT NULL,
    CreatedOn      INTEGER NOT NULL,
    UNIQUE (EventType, Version)
);

-- One row per accepted event, written in the transaction that writes its outbox rows.
CREATE TABLE GatewayEvent (
    EventSource     TEXT    NOT NULL,
    EventId         TEXT    NOT NULL,
    EventType       TEXT    NOT NULL,
    BusinessUnitId  TEXT    NOT NULL,
    CustomerId      TEXT    NOT NULL,
    RegistryVersion INTEGER NOT NULL,
    Routes          TEXT    NOT NULL,
    AcceptedOn      INTEGER NOT NULL,
    PRIMARY KEY (EventSource, EventId)
) WITHOUT ROWID;

-- The outbox lag per destination (the gateway metrics) counts unpublished rows by destination.
CREATE INDEX IX_Outbox_UnpublishedByDestination ON Outbox (Destination, Id) WHERE PublishedOn IS NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
