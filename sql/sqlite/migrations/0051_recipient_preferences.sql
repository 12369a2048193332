-- +goose Up
-- Recipient preferences and quiet hours (docs/channels.md#recipient-preferences), and the
-- delivery status Skipped: a delivery the recipient opted out of ends Skipped with its
-- reason, never silently and never as a failure.
--
-- RecipientPreference: one row per business unit, recipient (the delivery's recipient
-- address, trimmed and lower-cased: a customer id for push, an e-mail address, an E.164
-- number), channel and category. OptedIn 0 = opted out. Source says where the change came
-- from (api, sms-stop, list-unsubscribe), ChangedBy who (an operator, a number, "recipient").
-- Instants are INTEGER milliseconds since the Unix epoch, UTC.
CREATE TABLE RecipientPreference (
    BusinessUnitId TEXT    NOT NULL,
    RecipientId    TEXT    NOT NULL,
    Channel        TEXT    NOT NULL,
    Category       TEXT    NOT NULL,
    OptedIn        INTEGER NOT NULL CHECK (OptedIn IN (0, 1)),
    Source         TEXT    NOT NULL,
    ChangedBy      TEXT    NOT NULL,
    ChangedOn      INTEGER NOT NULL,
    Version        INTEGER NOT NULL DEFAULT 1,
    CONSTRAINT PK_RecipientPreference PRIMARY KEY (BusinessUnitId, RecipientId, Channel, Category)
);

-- QuietHours: a business unit's window (RecipientId '') or one recipient's. Local wall times
-- 'HH:MM'; NULL ends on a recipient's row mean "the unit's window", a NULL zone "the unit's
-- zone" (on a recipient's row: the unit's window's zone, else the unit's).
CREATE TABLE QuietHours (
    BusinessUnitId TEXT    NOT NULL,
    RecipientId    TEXT    NOT NULL,
    StartLocal     TEXT    NULL,
    EndLocal       TEXT    NULL,
    TimeZoneId     TEXT    NULL,
    ChangedBy      TEXT    NOT NULL,
    ChangedOn      INTEGER NOT NULL,
    Version        INTEGER NOT NULL DEFAULT 1,
    CONSTRAINT PK_QuietHours PRIMARY KEY (BusinessUnitId, RecipientId),
    CHECK ((StartLocal IS NULL) = (EndLocal IS NULL))
);

-- Skipped joins the statuses. SQLite cannot change a CHECK constraint in place, so
-- NotificationJob is rebuilt with every row, Id and its AUTOINCREMENT sequence, as 0025 did;
-- the columns and indexes are exactly the ones before.
CREATE TABLE NotificationJob_0051 (
    Id                       INTEGER PRIMARY KEY AUTOINCREMENT,
    DeliveryKey              TEXT    NOT NULL UNIQUE,
    EffectKey                TEXT    NOT NULL,
    SchedulerKey             TEXT    NOT NULL,
    SchedulerId              INTEGER NULL,
    BusinessUnitId           TEXT    NOT NULL,
    Channel                  TEXT    NOT NULL,
    Recipient                TEXT    NOT NULL,
    Template                 TEXT    NOT NULL,
    PayloadJson              TEXT    NOT NULL,
    LocalDate                TEXT    NOT NULL,
    Status                   TEXT    NOT NULL CHECK (Status IN ('Queued','Sending','Sent','Failed','Unknown','Skipped')),
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
    SentOn                   INTEGER NULL
);
INSERT INTO NotificationJob_0051 (Id, DeliveryKey, EffectKey, SchedulerKey, SchedulerId, BusinessUnitId, Channel,
    Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount,
    NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy,
    ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn)
SELECT Id, DeliveryKey, EffectKey, SchedulerKey, SchedulerId, BusinessUnitId, Channel,
    Recipient, Template, PayloadJson, LocalDate, Status, ProcessingLeaseExpiresOn, AttemptCount, RetryCount,
    NextAttemptOn, IsOnSupportHold, ProviderReference, LastError, TemplateVersion, Revision, ResolvedBy,
    ResolutionReason, ResolvedOn, Version, CreatedOn, UpdatedOn, SentOn
FROM NotificationJob ORDER BY Id;
DELETE FROM sqlite_sequence WHERE name = 'NotificationJob_0051';
INSERT INTO sqlite_sequence (name, seq) SELECT 'NotificationJob_0051', seq FROM sqlite_sequence WHERE name = 'NotificationJob';
DROP TABLE NotificationJob;
ALTER TABLE NotificationJob_0051 RENAME TO NotificationJob;

CREATE UNIQUE INDEX UX_NotificationJob_Effect ON NotificationJob (BusinessUnitId, EffectKey)
    WHERE EffectKey <> DeliveryKey;
CREATE INDEX IX_NotificationJob_SchedulerId ON NotificationJob (SchedulerId);
CREATE INDEX IX_NotificationJob_SchedulerKeyUnlinked ON NotificationJob (SchedulerKey)
    WHERE SchedulerId IS NULL;
CREATE INDEX IX_NotificationJob_NextAttempt ON NotificationJob (NextAttemptOn)
    WHERE Status IN ('Queued','Unknown') AND NextAttemptOn IS NOT NULL AND IsOnSupportHold = 0;
CREATE INDEX IX_NotificationJob_Lease ON NotificationJob (ProcessingLeaseExpiresOn)
    WHERE Status = 'Sending';
CREATE INDEX IX_NotificationJob_Unknown ON NotificationJob (BusinessUnitId, Id)
    WHERE Status = 'Unknown' AND NextAttemptOn IS NULL;
CREATE INDEX IX_NotificationJob_UnknownAll ON NotificationJob (BusinessUnitId)
    WHERE Status = 'Unknown';
CREATE INDEX IX_NotificationJob_Unsent ON NotificationJob (Id)
    WHERE Status IN ('Queued','Sending');
CREATE INDEX IX_NotificationJob_Updated ON NotificationJob (UpdatedOn, Status, BusinessUnitId)
    WHERE Status IN ('Sent', 'Failed', 'Unknown');

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
