-- +goose Up
-- Reminder lifecycle; the same tables, columns and indexes as
-- sql/sqlite/migrations/0003_reminder_lifecycle.sql. Conventions: see 0001_initial.sql.

ALTER TABLE dbo.BusinessUnit ADD
    TimeZoneIdGiven nvarchar(64)  NULL,
    RolesJson       nvarchar(max) NULL,
    Version         bigint        NOT NULL CONSTRAINT DF_BusinessUnit_Version DEFAULT 1,
    UpdatedOn       datetime2(3)  NOT NULL CONSTRAINT DF_BusinessUnit_UpdatedOn DEFAULT '1970-01-01T00:00:00';

CREATE NONCLUSTERED INDEX IX_ReminderSetting_Unit ON dbo.ReminderSetting (BusinessUnitId, Guid);

CREATE NONCLUSTERED INDEX IX_AutomationScheduler_Setting ON dbo.AutomationScheduler (SettingGuid, Id)
    INCLUDE (Status);

CREATE NONCLUSTERED INDEX IX_SourceSnapshot_Changed ON dbo.SourceSnapshot (BusinessUnitId, EntityType, UpdatedOn, EntityGuid)
    INCLUDE (IsDeleted);

-- Clustered key: 100 + 100 + 100 + 50 characters = 700 bytes, under the 900-byte limit.
CREATE TABLE dbo.ThresholdEdgeState (
    SettingGuid      nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    SourceEntityType nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    SourceEntityGuid nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ThresholdLevel   nvarchar(50)   COLLATE Latin1_General_100_BIN2 NOT NULL,
    IsMet            bit           NOT NULL,
    EdgeCount        bigint        NOT NULL,
    Revision         bigint        NOT NULL,
    UpdatedOn        datetime2(3)  NOT NULL,
    CONSTRAINT PK_ThresholdEdgeState PRIMARY KEY CLUSTERED (SettingGuid, SourceEntityType, SourceEntityGuid, ThresholdLevel)
);

CREATE TABLE dbo.ReconciliationState (
    SweepKey       nvarchar(300) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_ReconciliationState PRIMARY KEY CLUSTERED,
    Generation     bigint        NOT NULL,
    DoneGeneration bigint        NOT NULL,
    WatermarkOn    datetime2(3)  NULL,
    PassHighOn     datetime2(3)  NULL,
    CursorPosition nvarchar(1000) NULL, -- the keyset cursor (CURSOR, POSITION and LEVEL are reserved or future keywords)
    Marker         nvarchar(100) NULL,
    Version        bigint        NOT NULL,
    UpdatedOn      datetime2(3)  NOT NULL
);
CREATE NONCLUSTERED INDEX IX_ReconciliationState_Requested ON dbo.ReconciliationState (UpdatedOn, SweepKey)
    INCLUDE (Generation, DoneGeneration);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
