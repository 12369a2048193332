-- +goose Up
-- +goose NO TRANSACTION
-- IX_NotificationJob_Updated also includes Channel, as on SQLite
-- (sql/sqlite/migrations/0064_delivery_updated_channel.sql; issue 35: the console's overview
-- counts deliveries by channel). SupportThroughput groups the window's finished deliveries
-- by minute, status and channel from this index alone (covering: no key lookup per
-- delivery). The cost on the delivery path: no extra write, an entry is still written when a
-- job reaches Sent, Failed or Unknown (the filter of 0029); each entry is longer by the
-- channel name. An included column, so the seek on UpdatedOn and the filter are unchanged.
--
-- Online, as 0029: CREATE … WITH (DROP_EXISTING = ON) keeps the old index serving its
-- readers until the new one is built, ONLINE = ON where the edition allows it. Run again
-- after a stop, it finds Channel included and does nothing.

-- +goose StatementBegin
IF NOT EXISTS (SELECT 1 FROM sys.index_columns ic
    JOIN sys.indexes i ON i.object_id = ic.object_id AND i.index_id = ic.index_id
    JOIN sys.columns c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
    WHERE i.object_id = OBJECT_ID(N'dbo.NotificationJob') AND i.name = N'IX_NotificationJob_Updated' AND c.name = N'Channel')
BEGIN
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N', ONLINE = ON' ELSE N'' END;
    EXEC (N'CREATE NONCLUSTERED INDEX IX_NotificationJob_Updated ON dbo.NotificationJob (UpdatedOn) INCLUDE (Status, BusinessUnitId, Channel)
    WHERE Status IN (N''Sent'', N''Failed'', N''Unknown'') WITH (DROP_EXISTING = ON' + @with + N')');
END
-- +goose StatementEnd

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
