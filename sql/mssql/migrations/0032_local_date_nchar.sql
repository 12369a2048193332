-- +goose Up
-- +goose NO TRANSACTION
-- The local dates that queries compare become nchar(10) COLLATE Latin1_General_100_BIN2,
-- as the other compared keys are (0001_initial.sql; FeeTransfer.Day and
-- CampaignFeeProjection.Day already are): issue 32, item 10. go-mssqldb sends every Go
-- string as nvarchar, which has a higher data type precedence than char, so
-- "LocalDate >= @FromDate" on a char(10) column converted the column, and under a SQL
-- collation (SQL_Latin1_General_CP1_CI_AS, a common database default) the day-range reads
-- (DeliveryCountsByDay, CampaignCountsByDay) scanned IX_DeliveryProjection_Day and
-- IX_CampaignCommandProjection_Day instead of seeking them. The schema lint
-- (sql/mssql/schemalint_test.go, TestNoNarrowStringComparedWithParameter) keeps a
-- char/varchar column from being compared with a parameter again.
--
-- NotificationJob, CampaignExecution and CampaignCommand keep their char(10) LocalDate: no
-- query compares it (it is written and read back), and converting it would rewrite the two
-- hottest tables.
--
-- Each projection table: its day index dropped, the column converted (a size-of-data change:
-- every row rewritten from 10 to 20 bytes; ONLINE = ON where the edition allows it, see
-- 0031 and docs/deploy.md#online-migrations), the index built again. No transaction around
-- the file; each step is idempotent, so a stopped migration is run again from the top.
-- Between the drop and the rebuild the day-range reads scan, as they did before.

-- +goose StatementBegin
IF EXISTS (SELECT 1 FROM sys.columns WHERE object_id = OBJECT_ID(N'dbo.DeliveryProjection') AND name = N'LocalDate' AND TYPE_NAME(system_type_id) = N'char')
BEGIN
    DROP INDEX IF EXISTS IX_DeliveryProjection_Day ON dbo.DeliveryProjection;
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N' WITH (ONLINE = ON)' ELSE N'' END;
    EXEC (N'ALTER TABLE dbo.DeliveryProjection ALTER COLUMN LocalDate nchar(10) COLLATE Latin1_General_100_BIN2 NOT NULL' + @with);
END
-- +goose StatementEnd

-- +goose StatementBegin
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = OBJECT_ID(N'dbo.DeliveryProjection') AND name = N'IX_DeliveryProjection_Day')
BEGIN
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N' WITH (ONLINE = ON)' ELSE N'' END;
    EXEC (N'CREATE NONCLUSTERED INDEX IX_DeliveryProjection_Day ON dbo.DeliveryProjection (BusinessUnitId, LocalDate, Status)' + @with);
END
-- +goose StatementEnd

-- +goose StatementBegin
IF EXISTS (SELECT 1 FROM sys.columns WHERE object_id = OBJECT_ID(N'dbo.CampaignCommandProjection') AND name = N'LocalDate' AND TYPE_NAME(system_type_id) = N'char')
BEGIN
    DROP INDEX IF EXISTS IX_CampaignCommandProjection_Day ON dbo.CampaignCommandProjection;
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N' WITH (ONLINE = ON)' ELSE N'' END;
    EXEC (N'ALTER TABLE dbo.CampaignCommandProjection ALTER COLUMN LocalDate nchar(10) COLLATE Latin1_General_100_BIN2 NOT NULL' + @with);
END
-- +goose StatementEnd

-- +goose StatementBegin
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = OBJECT_ID(N'dbo.CampaignCommandProjection') AND name = N'IX_CampaignCommandProjection_Day')
BEGIN
    DECLARE @with nvarchar(40) = CASE WHEN CAST(SERVERPROPERTY('EngineEdition') AS int) IN (3, 5, 8) THEN N' WITH (ONLINE = ON)' ELSE N'' END;
    EXEC (N'CREATE NONCLUSTERED INDEX IX_CampaignCommandProjection_Day ON dbo.CampaignCommandProjection (BusinessUnitId, CampaignId, LocalDate)' + @with);
END
-- +goose StatementEnd

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
