-- +goose Up
-- The push channel's device registry; the same table as
-- sql/sqlite/migrations/0050_push_device.sql (docs/channels.md#device-registry). Conventions:
-- see 0001_initial.sql. The clustered key is 200 + 400 + 128 = 728 bytes (under 900);
-- Token itself (up to 4,000 characters) is not keyed.
CREATE TABLE dbo.PushDevice (
    BusinessUnitId nvarchar(100)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    CustomerId     nvarchar(200)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    TokenHash      nvarchar(64)   COLLATE Latin1_General_100_BIN2 NOT NULL,
    Token          nvarchar(4000) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Platform       nvarchar(20)   NOT NULL CONSTRAINT CK_PushDevice_Platform CHECK (Platform IN (N'android', N'ios', N'web')),
    App            nvarchar(200)  NOT NULL,
    RegisteredOn   datetime2(3)   NOT NULL,
    UpdatedOn      datetime2(3)   NOT NULL,
    RetiredOn      datetime2(3)   NULL,
    RetiredReason  nvarchar(100)  NOT NULL CONSTRAINT DF_PushDevice_RetiredReason DEFAULT N'',
    Version        bigint         NOT NULL CONSTRAINT DF_PushDevice_Version DEFAULT 1,
    CONSTRAINT PK_PushDevice PRIMARY KEY CLUSTERED (BusinessUnitId, CustomerId, TokenHash)
);
CREATE INDEX IX_PushDevice_Token ON dbo.PushDevice (BusinessUnitId, TokenHash);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
