-- +goose Up
-- Recipient preferences, quiet hours and the delivery status Skipped; the same tables as
-- sql/sqlite/migrations/0051_recipient_preferences.sql (docs/channels.md#recipient-preferences).
-- Conventions: see 0001_initial.sql. RecipientId is at most 254 characters (an e-mail
-- address's bound), so the key is 200 + 508 + 40 + 80 = 828 bytes, under 900.
CREATE TABLE dbo.RecipientPreference (
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    RecipientId    nvarchar(254) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Channel        nvarchar(20)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    Category       nvarchar(40)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    OptedIn        bit           NOT NULL,
    Source         nvarchar(40)  NOT NULL,
    ChangedBy      nvarchar(200) NOT NULL,
    ChangedOn      datetime2(3)  NOT NULL,
    Version        bigint        NOT NULL CONSTRAINT DF_RecipientPreference_Version DEFAULT 1,
    CONSTRAINT PK_RecipientPreference PRIMARY KEY CLUSTERED (BusinessUnitId, RecipientId, Channel, Category)
);

CREATE TABLE dbo.QuietHours (
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    RecipientId    nvarchar(254) COLLATE Latin1_General_100_BIN2 NOT NULL,
    StartLocal     char(5)       NULL,
    EndLocal       char(5)       NULL,
    TimeZoneId     nvarchar(100) NULL,
    ChangedBy      nvarchar(200) NOT NULL,
    ChangedOn      datetime2(3)  NOT NULL,
    Version        bigint        NOT NULL CONSTRAINT DF_QuietHours_Version DEFAULT 1,
    CONSTRAINT PK_QuietHours PRIMARY KEY CLUSTERED (BusinessUnitId, RecipientId),
    CONSTRAINT CK_QuietHours_BothEnds CHECK ((StartLocal IS NULL AND EndLocal IS NULL) OR (StartLocal IS NOT NULL AND EndLocal IS NOT NULL))
);

ALTER TABLE dbo.NotificationJob DROP CONSTRAINT CK_NotificationJob_Status;

ALTER TABLE dbo.NotificationJob ADD CONSTRAINT CK_NotificationJob_Status
    CHECK (Status IN (N'Queued', N'Sending', N'Sent', N'Failed', N'Unknown', N'Skipped'));

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
