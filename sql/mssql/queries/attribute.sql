-- The attribute engine (SQL Server). Same names as sql/sqlite/queries/attribute.sql.
-- Indexes (migration 0031): AttributeValue is clustered on the entity
-- (CX_AttributeValue_Entity: BusinessUnitId, EntityType, EntityId) with the unique business
-- key UQ_AttributeValue_Key (… , AttributeCode); AttributeProcessedEvent is clustered on
-- ProcessedOn with the unique key UQ_AttributeProcessedEvent_Key (entity, EventId). Every
-- statement below names a prefix of one of them with equality, so each is a seek.

-- name: AttributeProcessedInsert :exec
-- RowsAffected 0: the entity processed this event before (a redelivery). UPDLOCK + HOLDLOCK
-- make two concurrent deliveries of one event wait for each other instead of both inserting;
-- the check seeks UQ_AttributeProcessedEvent_Key, so its key-range lock covers that one key.
INSERT INTO dbo.AttributeProcessedEvent (BusinessUnitId, EntityType, EntityId, EventId, ProcessedOn)
SELECT @BusinessUnitId, @EntityType, @EntityId, @EventId, @Now
WHERE NOT EXISTS (SELECT 1 FROM dbo.AttributeProcessedEvent WITH (UPDLOCK, HOLDLOCK)
                  WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND EntityId = @EntityId AND EventId = @EventId);

-- name: AttributeProcessedPurge :exec
-- Up to @Limit ledger rows processed before @Before (the dedupe window's start): a range seek
-- of the clustered CX_AttributeProcessedEvent_ProcessedOn from its oldest end.
DELETE TOP (@Limit) FROM dbo.AttributeProcessedEvent WHERE ProcessedOn < @Before;

-- name: AttributeListEntity :many
-- One range seek of the clustered CX_AttributeValue_Entity: an entity's rows are together.
SELECT BusinessUnitId, EntityType, EntityId, AttributeCode, ValueType, ValueText, OrderKey, Period, PeriodRule, LastEventOn, UpdatedOn, Version
FROM dbo.AttributeValue
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND EntityId = @EntityId
ORDER BY AttributeCode;

-- name: AttributeGet :one
SELECT BusinessUnitId, EntityType, EntityId, AttributeCode, ValueType, ValueText, OrderKey, Period, PeriodRule, LastEventOn, UpdatedOn, Version
FROM dbo.AttributeValue WITH (UPDLOCK)
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND EntityId = @EntityId AND AttributeCode = @AttributeCode;

-- name: AttributeInsert :exec
-- RowsAffected 0: the row exists (someone inserted it since it was read).
INSERT INTO dbo.AttributeValue (BusinessUnitId, EntityType, EntityId, AttributeCode, ValueType, ValueText, OrderKey, Period, PeriodRule, LastEventOn, UpdatedOn, Version)
SELECT @BusinessUnitId, @EntityType, @EntityId, @AttributeCode, @ValueType, @ValueText, @OrderKey, @Period, @PeriodRule, @LastEventOn, @Now, 1
WHERE NOT EXISTS (SELECT 1 FROM dbo.AttributeValue WITH (UPDLOCK, HOLDLOCK)
                  WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND EntityId = @EntityId AND AttributeCode = @AttributeCode);

-- name: AttributeUpdate :exec
-- Guarded by the Version read: RowsAffected 0 means it moved on.
UPDATE dbo.AttributeValue
SET ValueType = @ValueType, ValueText = @ValueText, OrderKey = @OrderKey, Period = @Period, PeriodRule = @PeriodRule,
    LastEventOn = @LastEventOn, UpdatedOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND EntityId = @EntityId AND AttributeCode = @AttributeCode
  AND Version = @Version;

-- name: AttributeUpdateKeepOrder :exec
-- AttributeUpdate for a row whose OrderKey does not change (a flag set again, a streak in
-- the same period): OrderKey is not in the SET list, so the ranking index
-- IX_AttributeValue_Rank is not rewritten (an UPDATE rewrites every index holding a column
-- it sets, whether or not the value changes). Guarded by the Version read, as AttributeUpdate.
UPDATE dbo.AttributeValue
SET ValueType = @ValueType, ValueText = @ValueText, Period = @Period, PeriodRule = @PeriodRule,
    LastEventOn = @LastEventOn, UpdatedOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND EntityId = @EntityId AND AttributeCode = @AttributeCode
  AND Version = @Version;

-- name: AttributeDeltaInsert :exec
INSERT INTO dbo.AttributeDelta (BusinessUnitId, EntityType, EntityId, AttributeCode, Micros, EventId, CreatedOn)
VALUES (@BusinessUnitId, @EntityType, @EntityId, @AttributeCode, @Micros, @EventId, @Now);

-- name: AttributeDeltaSums :many
SELECT AttributeCode, SUM(Micros) FROM dbo.AttributeDelta
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND EntityId = @EntityId
GROUP BY AttributeCode ORDER BY AttributeCode;

-- name: AttributeDeltaOldest :many
-- READPAST: a delta still being inserted (uncommitted) is left for the next batch.
SELECT TOP (@Limit) Id, BusinessUnitId, EntityType, EntityId, AttributeCode, Micros
FROM dbo.AttributeDelta WITH (UPDLOCK, READPAST) ORDER BY Id;

-- name: AttributeDeltaDelete :exec
DELETE FROM dbo.AttributeDelta WHERE Id = @Id;

-- name: AttributeTop :many
-- Served by IX_AttributeValue_Rank (a seek on the first three columns, read in order).
SELECT TOP (@Limit) BusinessUnitId, EntityType, EntityId, AttributeCode, ValueType, ValueText, OrderKey, Period, PeriodRule, LastEventOn, UpdatedOn, Version
FROM dbo.AttributeValue
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND AttributeCode = @AttributeCode AND ValueType = 'number'
ORDER BY OrderKey DESC, EntityId;
