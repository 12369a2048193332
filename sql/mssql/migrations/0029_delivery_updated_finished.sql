-- +goose Up
-- +goose NO TRANSACTION
-- IX_NotificationJob_Updated holds finished jobs only, as on SQLite
-- (sql/sqlite/migrations/0029_delivery_updated_finished.sql; docs/performance.md, "The
-- delivery period index holds finished jobs"): its readers count Sent, Failed and Unknown
-- jobs and name the filter's predicate, so the filtered index matches them.
--
-- Online (issue 32, item 8; docs/deploy.md#online-migrations): this file first dropped the
-- index and built the filtered one in one transaction, offline, holding NotificationJob for
-- the build. It was rewritten in place for the reason 0025 gives (goose keeps no checksum;
-- both texts leave the same index). The filtered index now replaces the old one in a single
-- CREATE … WITH (DROP_EXISTING = ON), the documented way to change a filter ("To modify
-- the filtered index expression, use CREATE INDEX WITH DROP_EXISTING", Create filtered
-- indexes): the old index serves its readers until the new one is complete, and ONLINE = ON keeps the table writable where the edition allows it (as in
-- 0025). Run again after a stop, it finds the filter in place and does nothing.

-- +goose StatementBegin
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = OBJECT_ID(N'dbo.NotificationJob') AND name = N'IX_NotificationJob_Updated' AND has_filter = 1)
BEGIN
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N', ONLINE = ON' ELSE N'' END;
    EXEC (N'CREATE NONCLUSTERED INDEX IX_NotificationJob_Updated ON dbo.NotificationJob (UpdatedOn) INCLUDE (Status, BusinessUnitId)
    WHERE Status IN (N''Sent'', N''Failed'', N''Unknown'') WITH (DROP_EXISTING = ON' + @with + N')');
END
-- +goose StatementEnd

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
