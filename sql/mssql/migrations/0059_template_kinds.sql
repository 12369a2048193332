-- +goose Up
-- Template kinds and deletion; the same columns as
-- sql/sqlite/migrations/0059_template_kinds.sql (docs/channels.md#templates). Conventions:
-- see 0001_initial.sql. Adding NOT NULL columns with a constant default is a metadata-only
-- change on SQL Server 2012 and later, except for (max) types: Extra is therefore
-- nvarchar(4000), the bound delivery.MaxExtraChars enforces before a save.
ALTER TABLE dbo.NotificationTemplate ADD
    Kind    nvarchar(20)   NOT NULL CONSTRAINT DF_NotificationTemplate_Kind DEFAULT N'message'
        CONSTRAINT CK_NotificationTemplate_Kind CHECK (Kind IN (N'message', N'push', N'sms', N'whatsapp')),
    Extra   nvarchar(4000) NOT NULL CONSTRAINT DF_NotificationTemplate_Extra DEFAULT N'',
    Deleted bit            NOT NULL CONSTRAINT DF_NotificationTemplate_Deleted DEFAULT 0;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
