-- The attribute engine (SQLite). Same names as sql/mssql/queries/attribute.sql.

-- name: AttributeProcessedInsert :exec
-- RowsAffected 0: the entity processed this event before (a redelivery).
INSERT INTO AttributeProcessedEvent (BusinessUnitId, EntityType, EntityId, EventId, ProcessedOn)
VALUES (@BusinessUnitId, @EntityType, @EntityId, @EventId, @Now)
ON CONFLICT (BusinessUnitId, EntityType, EntityId, EventId) DO NOTHING;

-- name: AttributeProcessedPurge :exec
-- Up to @Limit ledger rows processed before @Before (the dedupe window's start).
DELETE FROM AttributeProcessedEvent
WHERE (BusinessUnitId, EntityType, EntityId, EventId) IN (
    SELECT BusinessUnitId, EntityType, EntityId, EventId FROM AttributeProcessedEvent WHERE ProcessedOn < @Before LIMIT @Limit);

-- name: AttributeListEntity :many
SELECT BusinessUnitId, EntityType, EntityId, AttributeCode, ValueType, ValueText, OrderKey, Period, PeriodRule, LastEventOn, UpdatedOn, Version
FROM AttributeValue
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND EntityId = @EntityId
ORDER BY AttributeCode;

-- name: AttributeGet :one
SELECT BusinessUnitId, EntityType, EntityId, AttributeCode, ValueType, ValueText, OrderKey, Period, PeriodRule, LastEventOn, UpdatedOn, Version
FROM AttributeValue
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND EntityId = @EntityId AND AttributeCode = @AttributeCode;

-- name: AttributeInsert :exec
-- RowsAffected 0: the row exists (someone inserted it since it was read).
INSERT INTO AttributeValue (BusinessUnitId, EntityType, EntityId, AttributeCode, ValueType, ValueText, OrderKey, Period, PeriodRule, LastEventOn, UpdatedOn, Version)
VALUES (@BusinessUnitId, @EntityType, @EntityId, @AttributeCode, @ValueType, @ValueText, @OrderKey, @Period, @PeriodRule, @LastEventOn, @Now, 1)
ON CONFLICT (BusinessUnitId, EntityType, EntityId, AttributeCode) DO NOTHING;

-- name: AttributeUpdate :exec
-- Guarded by the Version read: RowsAffected 0 means it moved on.
UPDATE AttributeValue
SET ValueType = @ValueType, ValueText = @ValueText, OrderKey = @OrderKey, Period = @Period, PeriodRule = @PeriodRule,
    LastEventOn = @LastEventOn, UpdatedOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND EntityId = @EntityId AND AttributeCode = @AttributeCode
  AND Version = @Version;

-- name: AttributeUpdateKeepOrder :exec
-- AttributeUpdate for a row whose OrderKey does not change (a flag set again, a streak in
-- the same period): OrderKey is not in the SET list, so the ranking index
-- IX_AttributeValue_Rank is not rewritten (an UPDATE rewrites every index holding a column
-- it sets, whether or not the value changes). Guarded by the Version read, as AttributeUpdate.
UPDATE AttributeValue
SET ValueType = @ValueType, ValueText = @ValueText, Period = @Period, PeriodRule = @PeriodRule,
    LastEventOn = @LastEventOn, UpdatedOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND EntityId = @EntityId AND AttributeCode = @AttributeCode
  AND Version = @Version;

-- name: AttributeDeltaInsert :exec
INSERT INTO AttributeDelta (BusinessUnitId, EntityType, EntityId, AttributeCode, Micros, EventId, CreatedOn)
VALUES (@BusinessUnitId, @EntityType, @EntityId, @AttributeCode, @Micros, @EventId, @Now);

-- name: AttributeDeltaSums :many
SELECT AttributeCode, SUM(Micros) FROM AttributeDelta
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND EntityId = @EntityId
GROUP BY AttributeCode ORDER BY AttributeCode;

-- name: AttributeDeltaOldest :many
SELECT Id, BusinessUnitId, EntityType, EntityId, AttributeCode, Micros FROM AttributeDelta ORDER BY Id LIMIT @Limit;

-- name: AttributeDeltaDelete :exec
DELETE FROM AttributeDelta WHERE Id = @Id;

-- name: AttributeTop :many
-- Served by IX_AttributeValue_Rank (a seek on the first three columns, read in order).
SELECT BusinessUnitId, EntityType, EntityId, AttributeCode, ValueType, ValueText, OrderKey, Period, PeriodRule, LastEventOn, UpdatedOn, Version
FROM AttributeValue
WHERE BusinessUnitId = @BusinessUnitId AND EntityType = @EntityType AND AttributeCode = @AttributeCode AND ValueType = 'number'
ORDER BY OrderKey DESC, EntityId
LIMIT @Limit;
