-- +goose Up
-- +goose NO TRANSACTION
-- The attribute tables' keys fit SQL Server's key limits (issue 32, item 1;
-- docs/conventions.md#sql-server-key-widths). 0011 made PK_AttributeValue and
-- PK_AttributeProcessedEvent clustered keys of up to 1,100 bytes (nvarchar 100 + 50 + 200 +
-- 200 characters, 2 bytes each); a clustered key holds at most 900, so the insert of a row
-- whose four values are long enough failed with error 1946. The business keys become unique
-- nonclustered indexes (1,100 of the 1,700 bytes a nonclustered key may hold), and each
-- table gets a narrow clustered index that serves its hot reads:
--   AttributeValue          CX_AttributeValue_Entity (BusinessUnitId, EntityType, EntityId),
--                           700 bytes + the 4-byte uniquifier: an entity's rows are together,
--                           and AttributeListEntity (every event reads its entities' rows)
--                           is one range seek; UQ_AttributeValue_Key keeps one row per
--                           (entity, AttributeCode) and serves AttributeGet/Insert/Update.
--   AttributeProcessedEvent CX_AttributeProcessedEvent_ProcessedOn (ProcessedOn), 8 bytes +
--                           uniquifier: rows append in time order and the retention purge
--                           (AttributeProcessedPurge) is a range seek instead of a scan;
--                           UQ_AttributeProcessedEvent_Key serves the redelivery check.
-- The column bounds are unchanged, so no input the engine accepted before is refused now.
--
-- Written for a database that already holds rows (docs/deploy.md#online-migrations): no
-- transaction around the whole file (goose NO TRANSACTION), each step idempotent, so a
-- migration stopped halfway is run again from the top; each index is built with
-- ONLINE = ON where the edition has online index operations (SERVERPROPERTY('EngineEdition')
-- 3: Enterprise, Developer, Evaluation; 5: Azure SQL Database, every service tier; 8: Azure
-- SQL Managed Instance) and offline elsewhere (Standard, Web, Express hold a schema lock for
-- the build). The unique index is built first, so uniqueness and the key seeks hold at every
-- step; the drop of the clustered primary key rewrites the table once as a heap and the new
-- clustered index once more (docs/deploy.md gives the time per million rows).

-- +goose StatementBegin
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = OBJECT_ID(N'dbo.AttributeValue') AND name = N'UQ_AttributeValue_Key')
BEGIN
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N' WITH (ONLINE = ON)' ELSE N'' END;
    EXEC (N'CREATE UNIQUE NONCLUSTERED INDEX UQ_AttributeValue_Key ON dbo.AttributeValue (BusinessUnitId, EntityType, EntityId, AttributeCode)' + @with);
END
-- +goose StatementEnd

-- +goose StatementBegin
IF OBJECT_ID(N'dbo.PK_AttributeValue', N'PK') IS NOT NULL
BEGIN
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N' WITH (ONLINE = ON)' ELSE N'' END;
    EXEC (N'ALTER TABLE dbo.AttributeValue DROP CONSTRAINT PK_AttributeValue' + @with);
END
-- +goose StatementEnd

-- +goose StatementBegin
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = OBJECT_ID(N'dbo.AttributeValue') AND name = N'CX_AttributeValue_Entity')
BEGIN
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N' WITH (ONLINE = ON)' ELSE N'' END;
    EXEC (N'CREATE CLUSTERED INDEX CX_AttributeValue_Entity ON dbo.AttributeValue (BusinessUnitId, EntityType, EntityId)' + @with);
END
-- +goose StatementEnd

-- +goose StatementBegin
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = OBJECT_ID(N'dbo.AttributeProcessedEvent') AND name = N'UQ_AttributeProcessedEvent_Key')
BEGIN
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N' WITH (ONLINE = ON)' ELSE N'' END;
    EXEC (N'CREATE UNIQUE NONCLUSTERED INDEX UQ_AttributeProcessedEvent_Key ON dbo.AttributeProcessedEvent (BusinessUnitId, EntityType, EntityId, EventId)' + @with);
END
-- +goose StatementEnd

-- +goose StatementBegin
IF OBJECT_ID(N'dbo.PK_AttributeProcessedEvent', N'PK') IS NOT NULL
BEGIN
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N' WITH (ONLINE = ON)' ELSE N'' END;
    EXEC (N'ALTER TABLE dbo.AttributeProcessedEvent DROP CONSTRAINT PK_AttributeProcessedEvent' + @with);
END
-- +goose StatementEnd

-- +goose StatementBegin
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = OBJECT_ID(N'dbo.AttributeProcessedEvent') AND name = N'CX_AttributeProcessedEvent_ProcessedOn')
BEGIN
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N' WITH (ONLINE = ON)' ELSE N'' END;
    EXEC (N'CREATE CLUSTERED INDEX CX_AttributeProcessedEvent_ProcessedOn ON dbo.AttributeProcessedEvent (ProcessedOn)' + @with);
END
-- +goose StatementEnd

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
