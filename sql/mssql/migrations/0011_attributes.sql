-- +goose Up
-- The attribute engine; the same tables as sql/sqlite/migrations/0011_attributes.sql
-- (docs/attributes.md#store). Conventions: see 0001_initial.sql. ValueText is an exact
-- decimal as text (never a float); OrderKey sorts like the number (IX_AttributeValue_Rank
-- serves the top-N query). AttributeDelta is append-only (hot counters): an insert takes no
-- lock on the counter row; the flusher folds and deletes deltas in batches.
CREATE TABLE dbo.AttributeValue (
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    EntityType     nvarchar(50)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    EntityId       nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    AttributeCode  nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ValueType      varchar(10)   NOT NULL CONSTRAINT CK_AttributeValue_Type CHECK (ValueType IN ('number', 'boolean', 'instant', 'list')),
    ValueText      nvarchar(max) NOT NULL,
    OrderKey       varchar(40)   COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT DF_AttributeValue_OrderKey DEFAULT '',
    Period         varchar(20)   NOT NULL CONSTRAINT DF_AttributeValue_Period DEFAULT '',
    PeriodRule     nvarchar(120) NOT NULL CONSTRAINT DF_AttributeValue_PeriodRule DEFAULT '',
    LastEventOn    datetime2(3)  NOT NULL,
    UpdatedOn      datetime2(3)  NOT NULL,
    Version        bigint        NOT NULL CONSTRAINT DF_AttributeValue_Version DEFAULT 1,
    CONSTRAINT PK_AttributeValue PRIMARY KEY CLUSTERED (BusinessUnitId, EntityType, EntityId, AttributeCode)
);

CREATE INDEX IX_AttributeValue_Rank ON dbo.AttributeValue (BusinessUnitId, EntityType, AttributeCode, OrderKey DESC, EntityId);

CREATE TABLE dbo.AttributeProcessedEvent (
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    EntityType     nvarchar(50)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    EntityId       nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    EventId        nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ProcessedOn    datetime2(3)  NOT NULL,
    CONSTRAINT PK_AttributeProcessedEvent PRIMARY KEY CLUSTERED (BusinessUnitId, EntityType, EntityId, EventId)
);

CREATE TABLE dbo.AttributeDelta (
    Id             bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_AttributeDelta PRIMARY KEY CLUSTERED,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    EntityType     nvarchar(50)  COLLATE Latin1_General_100_BIN2 NOT NULL,
    EntityId       nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    AttributeCode  nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Micros         bigint        NOT NULL,
    EventId        nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CreatedOn      datetime2(3)  NOT NULL
);

CREATE INDEX IX_AttributeDelta_Entity ON dbo.AttributeDelta (BusinessUnitId, EntityType, EntityId, AttributeCode) INCLUDE (Micros);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
