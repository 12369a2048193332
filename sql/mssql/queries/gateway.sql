-- The event gateway: registry versions and the (source, id) ledger (SQL Server); the same
-- names and parameters as sql/sqlite/queries/gateway.sql.

-- name: EventRegistryLatestVersion :one
-- UPDLOCK + HOLDLOCK: two saves of one type serialise here, so the second sees the first's version.
SELECT COALESCE(MAX(Version), 0) FROM dbo.EventRegistry WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE EventType = @EventType;

-- name: EventRegistryInsert :one
INSERT INTO dbo.EventRegistry (EventType, Version, DefinitionJson, Operator, CreatedOn)
OUTPUT INSERTED.Seq, INSERTED.EventType, INSERTED.Version, INSERTED.DefinitionJson, INSERTED.Operator, INSERTED.CreatedOn
VALUES (@EventType, @Version, @DefinitionJson, @Operator, @Now);

-- name: EventRegistryGet :one
SELECT Seq, EventType, Version, DefinitionJson, Operator, CreatedOn
FROM dbo.EventRegistry WHERE EventType = @EventType AND Version = @Version;

-- name: EventRegistryGetLatest :one
SELECT Seq, EventType, Version, DefinitionJson, Operator, CreatedOn
FROM dbo.EventRegistry WHERE EventType = @EventType
  AND Version = (SELECT MAX(x.Version) FROM dbo.EventRegistry x WHERE x.EventType = @EventType);

-- name: EventRegistryListLatest :many
SELECT r.Seq, r.EventType, r.Version, r.DefinitionJson, r.Operator, r.CreatedOn
FROM dbo.EventRegistry r
WHERE r.Version = (SELECT MAX(x.Version) FROM dbo.EventRegistry x WHERE x.EventType = r.EventType)
ORDER BY r.EventType;

-- name: EventRegistryListVersions :many
SELECT Seq, EventType, Version, DefinitionJson, Operator, CreatedOn
FROM dbo.EventRegistry WHERE EventType = @EventType ORDER BY Version;

-- name: EventRegistryStamp :one
SELECT COALESCE(MAX(Seq), 0) FROM dbo.EventRegistry;

-- name: GatewayEventInsert :exec
-- RowsAffected 0: the (source, id) was accepted before (a duplicate). UPDLOCK + HOLDLOCK
-- serialise two concurrent inserts of the same key.
INSERT INTO dbo.GatewayEvent (EventSource, EventId, EventType, BusinessUnitId, CustomerId, RegistryVersion, Routes, AcceptedOn)
SELECT @EventSource, @EventId, @EventType, @BusinessUnitId, @CustomerId, @RegistryVersion, @Routes, @Now
WHERE NOT EXISTS (SELECT 1 FROM dbo.GatewayEvent WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
                  WHERE EventSource = @EventSource AND EventId = @EventId);

-- name: GatewayEventDelete :exec
DELETE FROM dbo.GatewayEvent WHERE EventSource = @EventSource AND EventId = @EventId;

-- name: GatewayOutboxDelete :exec
DELETE FROM dbo.Outbox WHERE MessageId = @MessageId AND PublishedOn IS NULL;

-- name: OutboxLagGet :one
SELECT COUNT(*), MIN(CreatedOn) FROM dbo.Outbox WHERE Destination = @Destination AND PublishedOn IS NULL;

-- name: GatewayEventListByCustomer :many
-- A customer's accepted events in a business unit, newest first, below the cursor
-- (@BeforeOn, @BeforeEventId): a seek of IX_GatewayEvent_Customer (migration 0055).
SELECT TOP (@Limit) EventSource, EventId, EventType, BusinessUnitId, CustomerId, RegistryVersion, Routes, AcceptedOn
FROM dbo.GatewayEvent
WHERE BusinessUnitId = @BusinessUnitId AND CustomerId = @CustomerId
  AND (AcceptedOn < @BeforeOn OR (AcceptedOn = @BeforeOn AND EventId < @BeforeEventId))
ORDER BY AcceptedOn DESC, EventId DESC;
