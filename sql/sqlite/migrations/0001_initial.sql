-- +goose Up
-- Instants are INTEGER milliseconds since the Unix epoch, UTC. Local intent is text with its zone.

CREATE TABLE AutomationScheduler (
    Id                       INTEGER PRIMARY KEY AUTOINCREMENT,
    Guid                     TEXT    NOT NULL UNIQUE,
    AutomationType           TEXT    NOT NULL,
    TriggerType              TEXT    NOT NULL,
    SchedulerKey             TEXT    NOT NULL UNIQUE,
    SettingGuid              TEXT    NULL,
    SourceEntityType         TEXT    NOT NULL,
    SourceEntityGuid         TEXT    NOT NULL,
    BusinessUnitId           TEXT    NOT NULL,
    ScheduledOn              INTEGER NOT NULL,
    ScheduledLocalDate       TEXT    NOT NULL,
    ScheduledLocalTime       TEXT    NOT NULL,
    TimeZoneId               TEXT    NOT NULL,
    Status                   TEXT    NOT NULL CHECK (Status IN ('Pending','Processing','Completed','Failed','Deactivated','Cancelled')),
    ProcessingLeaseExpiresOn INTEGER NULL,
    RetryCount               INTEGER NOT NULL DEFAULT 0,
    NextRetryOn              INTEGER NULL,
    FailureReasonCode        TEXT    NULL,
    ReasonCode               TEXT    NULL,
    IsOnSupportHold          INTEGER NOT NULL DEFAULT 0,
    InputHash                TEXT    NOT NULL,
    ConflictInputHash        TEXT    NULL,
    DispatchResultJson       TEXT    NULL,
    TraceBlobName            TEXT    NULL,
    Version                  INTEGER NOT NULL DEFAULT 1,
    CreatedOn                INTEGER NOT NULL,
    UpdatedOn                INTEGER NOT NULL,
    CompletedOn              INTEGER NULL
);
-- The claim query: Pending, not on hold, by ScheduledOn.
CREATE INDEX IX_AutomationScheduler_Due ON AutomationScheduler (ScheduledOn, Id)
    WHERE Status = 'Pending' AND IsOnSupportHold = 0;
-- Stale-lease rescue.
CREATE INDEX IX_AutomationScheduler_Lease ON AutomationScheduler (ProcessingLeaseExpiresOn)
    WHERE Status = 'Processing';
CREATE INDEX IX_AutomationScheduler_Source ON AutomationScheduler (SourceEntityType, SourceEntityGuid);
CREATE INDEX IX_AutomationScheduler_Status ON AutomationScheduler (Status, BusinessUnitId);

CREATE TABLE NotificationJob (
    Id                       INTEGER PRIMARY KEY AUTOINCREMENT,
    DeliveryKey              TEXT    NOT NULL UNIQUE,
    SchedulerKey             TEXT    NOT NULL,
    BusinessUnitId           TEXT    NOT NULL,
    Channel                  TEXT    NOT NULL,
    Recipient                TEXT    NOT NULL,
    Template                 TEXT    NOT NULL,
    PayloadJson              TEXT    NOT NULL,
    Status                   TEXT    NOT NULL CHECK (Status IN ('Queued','Sending','Sent','Failed')),
    ProcessingLeaseExpiresOn INTEGER NULL,
    AttemptCount             INTEGER NOT NULL DEFAULT 0,
    ProviderReference        TEXT    NULL,
    LastError                TEXT    NULL,
    Version                  INTEGER NOT NULL DEFAULT 1,
    CreatedOn                INTEGER NOT NULL,
    UpdatedOn                INTEGER NOT NULL,
    SentOn                   INTEGER NULL
);
CREATE INDEX IX_NotificationJob_SchedulerKey ON NotificationJob (SchedulerKey);

CREATE TABLE Outbox (
    Id          INTEGER PRIMARY KEY AUTOINCREMENT,
    MessageId   TEXT    NOT NULL UNIQUE,
    Destination TEXT    NOT NULL,
    SessionId   TEXT    NULL,
    Body        BLOB    NOT NULL,
    CreatedOn   INTEGER NOT NULL,
    PublishedOn INTEGER NULL,
    Attempts    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IX_Outbox_Unpublished ON Outbox (Id) WHERE PublishedOn IS NULL;

CREATE TABLE BusinessUnit (
    Id         TEXT NOT NULL PRIMARY KEY,
    Name       TEXT NOT NULL,
    TimeZoneId TEXT NOT NULL
);

CREATE TABLE ReminderSetting (
    Guid           TEXT    NOT NULL PRIMARY KEY,
    BusinessUnitId TEXT    NOT NULL,
    SourceType     TEXT    NOT NULL,
    TriggerType    TEXT    NOT NULL,
    IsActive       INTEGER NOT NULL,
    Body           TEXT    NOT NULL,
    Version        INTEGER NOT NULL,
    UpdatedOn      INTEGER NOT NULL
);
CREATE INDEX IX_ReminderSetting_Source ON ReminderSetting (BusinessUnitId, SourceType);

CREATE TABLE SourceSnapshot (
    EntityType     TEXT    NOT NULL,
    EntityGuid     TEXT    NOT NULL,
    BusinessUnitId TEXT    NOT NULL,
    Revision       INTEGER NOT NULL,
    IsDeleted      INTEGER NOT NULL,
    DataJson       TEXT    NOT NULL,
    LastEventId    TEXT    NOT NULL,
    UpdatedOn      INTEGER NOT NULL,
    PRIMARY KEY (EntityType, EntityGuid)
);

CREATE TABLE ProcessedEvent (
    EventSource TEXT    NOT NULL,
    EventId     TEXT    NOT NULL,
    ProcessedOn INTEGER NOT NULL,
    PRIMARY KEY (EventSource, EventId)
);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
