-- +goose Up
-- The event gateway: the versioned event registry and the (source, id) ledger of accepted
-- events; the same tables as sql/sqlite/migrations/0009_gateway.sql. Conventions: see
-- 0001_initial.sql. Event ids and sources are at most 200 characters (the gateway accepts
-- ids of at most 100: "{eventId}:{route}" is a Service Bus MessageId, at most 128).
CREATE TABLE dbo.EventRegistry (
    Seq            bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_EventRegistry PRIMARY KEY CLUSTERED,
    EventType      nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Version        bigint        NOT NULL,
    DefinitionJson nvarchar(max) NOT NULL,
    Operator       nvarchar(200) NOT NULL,
    CreatedOn      datetime2(3)  NOT NULL,
    CONSTRAINT UQ_EventRegistry_TypeVersion UNIQUE (EventType, Version)
);

CREATE TABLE dbo.GatewayEvent (
    EventSource     nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    EventId         nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    EventType       nvarchar(200) NOT NULL,
    BusinessUnitId  nvarchar(100) NOT NULL,
    CustomerId      nvarchar(128) NOT NULL,
    RegistryVersion bigint        NOT NULL,
    Routes          nvarchar(100) NOT NULL,
    AcceptedOn      datetime2(3)  NOT NULL,
    CONSTRAINT PK_GatewayEvent PRIMARY KEY CLUSTERED (EventSource, EventId)
);

CREATE NONCLUSTERED INDEX IX_Outbox_UnpublishedByDestination ON dbo.Outbox (Destination, Id) WHERE PublishedOn IS NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
