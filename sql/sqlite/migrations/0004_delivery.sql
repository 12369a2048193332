-- +goose Up
-- Delivery (docs/architecture.md#dispatch, docs/architecture.md#commands, docs/architecture.md#facts): each NotificationJob is a command with an
-- EffectKey unique per business unit, a Revision that grows on every status change (each
-- change writes a fact to the outbox in the same transaction), backoff and support hold on
-- the send claim, the UNKNOWN outcome with its manual resolution, versioned templates
-- overridable per business unit, and the revision-aware reporting projection of the facts.
--
-- SQLite cannot change a CHECK constraint in place: NotificationJob is rebuilt with the new
-- status 'Unknown' and its new columns, keeping every row and Id.

CREATE TABLE NotificationJob_0004 (
    Id                       INTEGER PRIMARY KEY AUTOINCREMENT,
    DeliveryKey              TEXT    NOT NULL UNIQUE,
    EffectKey                TEXT    NOT NULL,
    SchedulerKey             TEXT    NOT NULL,
    BusinessUnitId           TEXT    NOT NULL,
    Channel                  TEXT    NOT NULL,
    Recipient                TEXT    NOT NULL,
    Template                 TEXT    NOT NULL,
    PayloadJson              TEXT    NOT NULL,
    LocalDate                TEXT    NOT NULL,
    Status                   TEXT    NOT NULL CHECK (Status IN ('Queued','Sending','Sent','Failed','Unknown')),
    ProcessingLeaseExpiresOn INTEGER NULL,
    AttemptCount             INTEGER NOT NULL DEFAULT 0,
    RetryCount               INTEGER NOT NULL DEFAULT 0,
    NextAttemptOn            INTEGER NULL,
    IsOnSupportHold          INTEGER NOT NULL DEFAULT 0,
    ProviderReference        TEXT    NULL,
    LastError                TEXT    NULL,
    TemplateVersion          INTEGER NULL,
    Revision                 INTEGER NOT NULL DEFAULT 1,
    ResolvedBy               TEXT    NULL,
    ResolutionReason         TEXT    NULL,
    ResolvedOn               INTEGER NULL,
    Version                  INTEGER NOT NULL DEFAULT 1,
    CreatedOn                INTEGER NOT NULL,
    UpdatedOn                INTEGER NOT NULL,
    SentOn                   INTEGER NULL,
    UNIQUE (BusinessUnitId, EffectKey)
);
INSERT INTO NotificationJob_0004 (Id, DeliveryKey, EffectKey, SchedulerKey, BusinessUnitId, Channel, Recipient,
    Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, ProviderReference, LastError,
    Version, CreatedOn, UpdatedOn, SentOn)
SELECT Id, DeliveryKey, DeliveryKey, SchedulerKey, BusinessUnitId, Channel, Recipient,
    Template, PayloadJson, strftime('%Y-%m-%d', CreatedOn / 1000, 'unixepoch'), Status, ProcessingLeaseExpiresOn,
    AttemptCount, ProviderReference, LastError, Version, CreatedOn, UpdatedOn, SentOn
FROM NotificationJob;
DROP TABLE NotificationJob;
ALTER TABLE NotificationJob_0004 RENAME TO NotificationJob;
CREATE INDEX IX_NotificationJob_SchedulerKey ON NotificationJob (SchedulerKey);
-- The dispatch sweep: retries and lookups whose time came, send claims whose lease expired.
CREATE INDEX IX_NotificationJob_NextAttempt ON NotificationJob (NextAttemptOn)
    WHERE Status IN ('Queued','Unknown') AND NextAttemptOn IS NOT NULL AND IsOnSupportHold = 0;
CREATE INDEX IX_NotificationJob_Lease ON NotificationJob (ProcessingLeaseExpiresOn)
    WHERE Status = 'Sending';
-- The manual-resolution queue, per business unit.
CREATE INDEX IX_NotificationJob_Unknown ON NotificationJob (BusinessUnitId, Id)
    WHERE Status = 'Unknown' AND NextAttemptOn IS NULL;
CREATE INDEX IX_NotificationJob_Unsent ON NotificationJob (Id)
    WHERE Status IN ('Queued','Sending');

-- Templates: one row per (key, business unit, version); BusinessUnitId '' is the default
-- every business unit without its own override uses. Rows are never updated.
CREATE TABLE NotificationTemplate (
    TemplateKey    TEXT    NOT NULL,
    BusinessUnitId TEXT    NOT NULL,
    Version        INTEGER NOT NULL,
    Subject        TEXT    NOT NULL,
    TextBody       TEXT    NOT NULL,
    HtmlBody       TEXT    NOT NULL,
    CreatedBy      TEXT    NOT NULL,
    CreatedOn      INTEGER NOT NULL,
    PRIMARY KEY (TemplateKey, BusinessUnitId, Version)
);

-- The reporting projection of delivery facts: the highest revision per command.
CREATE TABLE DeliveryProjection (
    CommandId      TEXT    NOT NULL PRIMARY KEY,
    BusinessUnitId TEXT    NOT NULL,
    LocalDate      TEXT    NOT NULL,
    Channel        TEXT    NOT NULL,
    Status         TEXT    NOT NULL,
    Revision       INTEGER NOT NULL,
    EventId        TEXT    NOT NULL,
    OccurredOn     INTEGER NOT NULL,
    AppliedOn      INTEGER NOT NULL
);
CREATE INDEX IX_DeliveryProjection_Day ON DeliveryProjection (BusinessUnitId, LocalDate, Status);

-- How fresh the projection is: the newest fact instant it has applied.
CREATE TABLE DeliveryProjectionState (
    Name      TEXT    NOT NULL PRIMARY KEY,
    FreshTo   INTEGER NOT NULL,
    UpdatedOn INTEGER NOT NULL
);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
