-- +goose Up
-- Reminder lifecycle (docs/architecture.md#reminders): managed business units, settings paging,
-- threshold edge state and bounded reconciliation sweeps.
-- Instants are INTEGER milliseconds since the Unix epoch, UTC.

-- Business units become managed resources: the zone id as given (a Windows id is stored
-- mapped to IANA in TimeZoneId), recipient role lists, and an optimistic-concurrency Version.
ALTER TABLE BusinessUnit ADD COLUMN TimeZoneIdGiven TEXT NULL;
ALTER TABLE BusinessUnit ADD COLUMN RolesJson TEXT NULL;
ALTER TABLE BusinessUnit ADD COLUMN Version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE BusinessUnit ADD COLUMN UpdatedOn INTEGER NOT NULL DEFAULT 0;

-- Settings pages (by Guid within a business unit) and the active (BU, source type) pairs.
CREATE INDEX IX_ReminderSetting_Unit ON ReminderSetting (BusinessUnitId, Guid);

-- Open rows of one setting (settings changes, docs/architecture.md#settings-changes).
CREATE INDEX IX_AutomationScheduler_Setting ON AutomationScheduler (SettingGuid, Id);

-- Sources of one business unit and type by change time (propagation and source sweeps, docs/architecture.md#reconciliation).
CREATE INDEX IX_SourceSnapshot_Changed ON SourceSnapshot (BusinessUnitId, EntityType, UpdatedOn, EntityGuid);

-- Rising-edge state per setting, source and threshold level (docs/architecture.md#threshold-reminders, FalseToTrue), guarded by
-- the source revision it was computed from.
CREATE TABLE ThresholdEdgeState (
    SettingGuid      TEXT    NOT NULL,
    SourceEntityType TEXT    NOT NULL,
    SourceEntityGuid TEXT    NOT NULL,
    ThresholdLevel   TEXT    NOT NULL,
    IsMet            INTEGER NOT NULL,
    EdgeCount        INTEGER NOT NULL,
    Revision         INTEGER NOT NULL,
    UpdatedOn        INTEGER NOT NULL,
    PRIMARY KEY (SettingGuid, SourceEntityType, SourceEntityGuid, ThresholdLevel)
);

-- Progress of each bounded sweep (docs/architecture.md#reconciliation): requested/completed passes, the changed-since
-- watermark, the keyset position (cursor) inside a pass, a marker (tzdata version) and a Version guard.
CREATE TABLE ReconciliationState (
    SweepKey       TEXT    NOT NULL PRIMARY KEY,
    Generation     INTEGER NOT NULL,
    DoneGeneration INTEGER NOT NULL,
    WatermarkOn    INTEGER NULL,
    PassHighOn     INTEGER NULL,
    CursorPosition TEXT    NULL,
    Marker         TEXT    NULL,
    Version        INTEGER NOT NULL,
    UpdatedOn      INTEGER NOT NULL
);
CREATE INDEX IX_ReconciliationState_Requested ON ReconciliationState (UpdatedOn, SweepKey)
    WHERE Generation > DoneGeneration;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
