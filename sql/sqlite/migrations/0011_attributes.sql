-- +goose Up
-- The attribute engine (docs/attributes.md#store). AttributeValue is the EAV table: one row
-- per business unit, entity and attribute code; ValueText holds the value as text (an exact
-- decimal, never a float), OrderKey a fixed-width text that sorts like the number (the
-- ranking index IX_AttributeValue_Rank serves the top-N query). AttributeProcessedEvent is the
-- per-entity ledger of applied event ids (a redelivery is a no-op). AttributeDelta holds hot
-- counters' increments in micro-units, appended without touching the counter row and folded
-- in batches. Instants are INTEGER milliseconds since the Unix epoch, UTC.
CREATE TABLE AttributeValue (
    BusinessUnitId TEXT    NOT NULL,
    EntityType     TEXT    NOT NULL,
    EntityId       TEXT    NOT NULL,
    AttributeCode  TEXT    NOT NULL,
    ValueType      TEXT    NOT NULL CHECK (ValueType IN ('number', 'boolean', 'instant', 'list')),
    ValueText      TEXT    NOT NULL,
    OrderKey       TEXT    NOT NULL DEFAULT '',
    Period         TEXT    NOT NULL DEFAULT '',
    PeriodRule     TEXT    NOT NULL DEFAULT '',
    LastEventOn    INTEGER NOT NULL,
    UpdatedOn      INTEGER NOT NULL,
    Version        INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (BusinessUnitId, EntityType, EntityId, AttributeCode)
) WITHOUT ROWID;

CREATE INDEX IX_AttributeValue_Rank ON AttributeValue (BusinessUnitId, EntityType, AttributeCode, OrderKey DESC, EntityId);

CREATE TABLE AttributeProcessedEvent (
    BusinessUnitId TEXT    NOT NULL,
    EntityType     TEXT    NOT NULL,
    EntityId       TEXT    NOT NULL,
    EventId        TEXT    NOT NULL,
    ProcessedOn    INTEGER NOT NULL,
    PRIMARY KEY (BusinessUnitId, EntityType, EntityId, EventId)
) WITHOUT ROWID;

CREATE TABLE AttributeDelta (
    Id             INTEGER PRIMARY KEY AUTOINCREMENT,
    BusinessUnitId TEXT    NOT NULL,
    EntityType     TEXT    NOT NULL,
    EntityId       TEXT    NOT NULL,
    AttributeCode  TEXT    NOT NULL,
    Micros         INTEGER NOT NULL,
    EventId        TEXT    NOT NULL,
    CreatedOn      INTEGER NOT NULL
);

CREATE INDEX IX_AttributeDelta_Entity ON AttributeDelta (BusinessUnitId, EntityType, EntityId, AttributeCode);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
