-- The event gateway: registry versions and the (source, id) ledger (SQLite).

-- name: EventRegistryLatestVersion :one
SELECT COALESCE(MAX(Version), 0) FROM EventRegistry WHERE EventType = @EventType;

-- name: EventRegistryInsert :one
INSERT INTO EventRegistry (EventType, Version, DefinitionJson, Operator, CreatedOn)
VALUES (@EventType, @Version, @DefinitionJson, @Operator, @Now)
RETURNING Seq, EventType, Version, DefinitionJson, Operator, CreatedOn;

-- name: EventRegistryGet :one
SELECT Seq, EventType, Version, DefinitionJson, Operator, CreatedOn
FROM EventRegistry WHERE EventType = @EventType AND Version = @Version;

-- name: EventRegistryGetLatest :one
SELECT Seq, EventType, Version, DefinitionJson, Operator, CreatedOn
FROM EventRegistry WHERE EventType = @EventType
  AND Version = (SELECT MAX(x.Version) FROM EventRegistry x WHERE x.EventType = @EventType);

-- name: EventRegistryListLatest :many
SELECT r.Seq, r.EventType, r.Version, r.DefinitionJson, r.Operator, r.CreatedOn
FROM EventRegistry r
WHERE r.Version = (SELECT MAX(x.Version) FROM EventRegistry x WHERE x.EventType = r.EventType)
ORDER BY r.EventType;

-- name: EventRegistryListVersions :many
SELECT Seq, EventType, Version, DefinitionJson, Operator, CreatedOn
FROM EventRegistry WHERE EventType = @EventType ORDER BY Version;

-- name: EventRegistryStamp :one
SELECT COALESCE(MAX(Seq), 0) FROM EventRegistry;

-- name: GatewayEventInsert :exec
-- RowsAffected 0: the (source, id) was accepted before (a duplicate).
INSERT INTO GatewayEvent (EventSource, EventId, EventType, BusinessUnitId, CustomerId, RegistryVersion, Routes, AcceptedOn)
VALUES (@EventSource, @EventId, @EventType, @BusinessUnitId, @CustomerId, @RegistryVersion, @Routes, @Now)
ON CONFLICT (EventSource, EventId) DO NOTHING;

-- name: GatewayEventDelete :exec
-- Undoes this transaction's ledger row of an event whose outbox MessageId was taken.
DELETE FROM GatewayEvent WHERE EventSource = @EventSource AND EventId = @EventId;

-- name: GatewayOutboxDelete :exec
-- Undoes this transaction's outbox row of an event whose other MessageId was taken. A
-- gateway message is never a delivery fact: the Destination term lets SQLite seek the
-- partial UX_Outbox_MessageId (migration 0026).
DELETE FROM Outbox WHERE MessageId = @MessageId AND Destination <> 'delivery-facts' AND PublishedOn IS NULL;

-- name: OutboxLagGet :one
SELECT COUNT(*), MIN(CreatedOn) FROM Outbox WHERE Destination = @Destination AND PublishedOn IS NULL;

-- name: GatewayEventListByCustomer :many
-- A customer's accepted events in a business unit, newest first, below the cursor
-- (@BeforeOn, @BeforeEventId): a seek of IX_GatewayEvent_Customer (migration 0055).
SELECT EventSource, EventId, EventType, BusinessUnitId, CustomerId, RegistryVersion, Routes, AcceptedOn
FROM GatewayEvent
WHERE BusinessUnitId = @BusinessUnitId AND CustomerId = @CustomerId
  AND (AcceptedOn < @BeforeOn OR (AcceptedOn = @BeforeOn AND EventId < @BeforeEventId))
ORDER BY AcceptedOn DESC, EventId DESC
LIMIT @Limit;
