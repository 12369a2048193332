-- Campaigns, executions, commands, their projection and the outbox relay's lease (SQLite;
-- docs/campaigns.md; the claims themselves are outbox_claim.sql.tmpl). Same names, parameters
-- and columns as sql/mssql/queries/campaign.sql.
-- name: CampaignGet :one
SELECT BusinessUnitId, CampaignId, Name, Status, RunId, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM Campaign WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId;

-- name: CampaignGetForUpdate :one
SELECT BusinessUnitId, CampaignId, Name, Status, RunId, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM Campaign WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId;

-- name: CampaignInsert :exec
INSERT INTO Campaign (BusinessUnitId, CampaignId, Name, Status, RunId, DefinitionJson, Version, CreatedOn, UpdatedOn)
VALUES (@BusinessUnitId, @CampaignId, @Name, @Status, @RunId, @DefinitionJson, 1, @Now, @Now);

-- name: CampaignUpdate :exec
-- Guarded by the Version the caller read (If-Match).
UPDATE Campaign SET Name = @Name, Status = @Status, RunId = @RunId, DefinitionJson = @DefinitionJson,
    Version = Version + 1, UpdatedOn = @Now
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Version = @Version;

-- name: CampaignTriggerDelete :exec
DELETE FROM CampaignTrigger WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId;

-- name: CampaignTriggerInsert :exec
INSERT INTO CampaignTrigger (BusinessUnitId, EventType, CampaignId) VALUES (@BusinessUnitId, @EventType, @CampaignId);

-- name: CampaignTriggersOf :many
SELECT EventType FROM CampaignTrigger WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId ORDER BY EventType;

-- name: CampaignList :many
SELECT BusinessUnitId, CampaignId, Name, Status, RunId, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM Campaign WHERE BusinessUnitId = @BusinessUnitId AND CampaignId > @AfterId
ORDER BY CampaignId
LIMIT @Limit;

-- name: CampaignListByTrigger :many
SELECT c.BusinessUnitId, c.CampaignId, c.Name, c.Status, c.RunId, c.DefinitionJson, c.Version, c.CreatedOn, c.UpdatedOn
FROM CampaignTrigger t JOIN Campaign c ON c.BusinessUnitId = t.BusinessUnitId AND c.CampaignId = t.CampaignId
WHERE t.BusinessUnitId = @BusinessUnitId AND t.EventType = @EventType AND c.Status IN ('ACTIVE', 'PAUSED')
ORDER BY c.CampaignId;

-- name: CampaignExecutionInsert :exec
-- A replayed event finds its execution id stored: nothing is inserted (RowsAffected 0).
INSERT INTO CampaignExecution (ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate,
    Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn)
VALUES (@ExecutionId, @BusinessUnitId, @CampaignId, @RunId, @RecipientId, @SourceEventId, @LocalDate,
    'RUNNING', @CurrentIndex, @DefinitionJson, 1, @Now, @Now)
ON CONFLICT (ExecutionId) DO NOTHING;

-- name: CampaignExecutionGet :one
SELECT Id, ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate, Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM CampaignExecution WHERE ExecutionId = @ExecutionId;

-- name: CampaignExecutionList :many
-- One campaign's executions, newest first, below the cursor @BeforeId: a seek of
-- IX_CampaignExecution_Campaign (migration 0021).
SELECT Id, ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate, Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM CampaignExecution
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Id < @BeforeId
ORDER BY Id DESC
LIMIT @Limit;

-- name: CampaignExecutionGetForUpdate :one
SELECT Id, ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate, Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM CampaignExecution WHERE ExecutionId = @ExecutionId;

-- name: CampaignExecutionUpdate :exec
UPDATE CampaignExecution SET Status = @Status, CurrentIndex = @CurrentIndex, Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Version;

-- name: CampaignCommandInsert :exec
-- An existing command id, or another command for the same effect, is left alone.
INSERT INTO CampaignCommand (CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, RunId, ActionIndex, ActionKey,
    ActionType, Provider, LocalDate, ParamsJson, Status, NextAttemptOn, Revision, Version, CreatedOn, UpdatedOn)
VALUES (@CommandId, @EffectKey, @ExecutionId, @BusinessUnitId, @CampaignId, @RecipientId, @RunId, @ActionIndex, @ActionKey,
    @ActionType, @Provider, @LocalDate, NULL, @Status, NULL, 1, 1, @Now, @Now)
ON CONFLICT DO NOTHING;

-- name: CampaignCommandGet :one
SELECT Id, CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, RunId, ActionIndex, ActionKey, ActionType, Provider, LocalDate, ParamsJson, Status, LeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, ProviderRef, ResultJson, LastError, ResolvedBy, ResolutionReason, Revision, Version, CreatedOn, UpdatedOn, FirstClaimedOn
FROM CampaignCommand WHERE CommandId = @CommandId;

-- name: CampaignCommandGetForUpdate :one
-- The read of a read-decide-write transaction (writers are serialised by BEGIN IMMEDIATE).
SELECT Id, CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, RunId, ActionIndex, ActionKey, ActionType, Provider, LocalDate, ParamsJson, Status, LeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, ProviderRef, ResultJson, LastError, ResolvedBy, ResolutionReason, Revision, Version, CreatedOn, UpdatedOn, FirstClaimedOn
FROM CampaignCommand WHERE CommandId = @CommandId;

-- name: CampaignCommandsOf :many
SELECT Id, CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, RunId, ActionIndex, ActionKey, ActionType, Provider, LocalDate, ParamsJson, Status, LeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, ProviderRef, ResultJson, LastError, ResolvedBy, ResolutionReason, Revision, Version, CreatedOn, UpdatedOn, FirstClaimedOn
FROM CampaignCommand WHERE ExecutionId = @ExecutionId ORDER BY ActionIndex;

-- name: CampaignCommandUpdate :exec
-- Writes the state decided in Go, guarded by the Version read (the claim token).
UPDATE CampaignCommand SET ParamsJson = @ParamsJson, Status = @Status, LeaseExpiresOn = @LeaseExpiresOn,
    AttemptCount = @AttemptCount, RetryCount = @RetryCount, NextAttemptOn = @NextAttemptOn, ProviderRef = @ProviderRef,
    ResultJson = @ResultJson, LastError = @LastError, ResolvedBy = @ResolvedBy, ResolutionReason = @ResolutionReason,
    Revision = @Revision, Version = Version + 1, UpdatedOn = @Now, FirstClaimedOn = @FirstClaimedOn
WHERE Id = @Id AND Version = @Version;

-- name: CampaignCommandListDue :many
-- Candidates of a due sweep, oldest first: retries and lookups whose time came, expired
-- leases, and (QueuedBefore) QUEUED commands whose message was lost.
SELECT CommandId
FROM CampaignCommand
WHERE (Status IN ('QUEUED', 'UNKNOWN', 'WAITING_BUDGET') AND NextAttemptOn IS NOT NULL AND NextAttemptOn <= @Now)
   OR (Status = 'RUNNING' AND LeaseExpiresOn <= @Now)
   OR (Status = 'QUEUED' AND NextAttemptOn IS NULL AND UpdatedOn <= @QueuedBefore)
ORDER BY Id
LIMIT @Limit;

-- name: CampaignListUnknown :many
SELECT Id, CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, RunId, ActionIndex, ActionKey, ActionType, Provider, LocalDate, ParamsJson, Status, LeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, ProviderRef, ResultJson, LastError, ResolvedBy, ResolutionReason, Revision, Version, CreatedOn, UpdatedOn, FirstClaimedOn
FROM CampaignCommand
WHERE BusinessUnitId = @BusinessUnitId AND (@CampaignId = '' OR CampaignId = @CampaignId)
  AND Status = 'UNKNOWN' AND NextAttemptOn IS NULL AND Id > @AfterId
ORDER BY Id
LIMIT @Limit;

-- name: CampaignProjectionRevisionForUpdate :one
-- The read of CampaignFactApply (read, then insert or update): the transaction already holds
-- SQLite's one write lock, so no hint.
SELECT Revision FROM CampaignCommandProjection WHERE CommandId = @CommandId;

-- name: CampaignProjectionInsert :exec
INSERT INTO CampaignCommandProjection (CommandId, BusinessUnitId, CampaignId, RunId, RecipientId, LocalDate, Status, Revision)
VALUES (@CommandId, @BusinessUnitId, @CampaignId, @RunId, @RecipientId, @LocalDate, @Status, @Revision);

-- name: CampaignProjectionUpdate :exec
UPDATE CampaignCommandProjection SET Status = @Status, Revision = @Revision
WHERE CommandId = @CommandId AND Revision < @Revision;

-- name: CampaignProjectionFreshTo :one
SELECT FreshTo FROM CampaignProjectionState WHERE Id = 1;

-- name: CampaignProjectionSetFreshTo :exec
INSERT INTO CampaignProjectionState (Id, FreshTo) VALUES (1, @FreshTo)
ON CONFLICT (Id) DO UPDATE SET FreshTo = excluded.FreshTo WHERE FreshTo IS NULL OR FreshTo < excluded.FreshTo;

-- name: CampaignCountsByDay :many
SELECT LocalDate, Status, COUNT(*)
FROM CampaignCommandProjection
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND LocalDate >= @FromDate AND LocalDate <= @ToDate
GROUP BY LocalDate, Status
ORDER BY LocalDate, Status;

-- name: CampaignMetricsCommands :one
-- One business unit's commands, or every unit's when @BusinessUnitId is ''.
SELECT COALESCE(SUM(CASE WHEN Status = 'QUEUED' THEN 1 ELSE 0 END), 0),
       COALESCE(SUM(CASE WHEN Status = 'UNKNOWN' THEN 1 ELSE 0 END), 0),
       COALESCE(SUM(CASE WHEN Status = 'RUNNING' AND LeaseExpiresOn <= @Now THEN 1 ELSE 0 END), 0)
FROM CampaignCommand WHERE Status IN ('QUEUED', 'UNKNOWN', 'RUNNING') AND (@BusinessUnitId = '' OR BusinessUnitId = @BusinessUnitId);

-- name: CampaignMetricsOutbox :one
SELECT COUNT(*), MIN(CreatedOn) FROM Outbox WHERE PublishedOn IS NULL;

-- name: OutboxBacklogCount :one
-- The backpressure gate's count (delivery.Backlog): the unpublished rows alone, answered from
-- the partial index of unpublished rows without reading the table (CampaignMetricsOutbox's
-- MIN(CreatedOn) reads every unpublished row's table row: 8x the cost at 40,000 rows).
SELECT COUNT(*) FROM Outbox WHERE PublishedOn IS NULL;

-- name: OutboxClaimLock :exec
-- Serializes claims. SQLite already does: a write transaction holds the one write lock.
SELECT 1;

-- name: OutboxLeaseExpire :exec
-- A claim first drops the leases that ended (a relay that died, or one that marked its rows
-- without releasing).
DELETE FROM OutboxLease WHERE LeaseUntil <= @Now;

-- name: OutboxLeaseInsert :exec
-- @SkipDestinations: NULL, or the claim's @Skip (the destinations whose rows it left out).
INSERT INTO OutboxLease (ClaimToken, FirstId, LastId, LeaseUntil, SkipDestinations) VALUES (@ClaimToken, @FirstId, @LastId, @LeaseUntil, @SkipDestinations);

-- name: OutboxRetryLater :exec
-- A failed publish: the row waits for RetryAt; only while the claim still holds it (its
-- lease, which the next claim drops once it ended, has the row in its range).
UPDATE Outbox SET Attempts = Attempts + 1, RetryAt = @RetryAt, LeaseUntil = NULL, ClaimToken = NULL
WHERE Id = @Id AND PublishedOn IS NULL
  AND EXISTS (SELECT 1 FROM OutboxLease WHERE ClaimToken = @ClaimToken AND FirstId <= @Id AND LastId >= @Id);

-- name: OutboxLeaseShrink :exec
-- The claim gives back its rows from @FromId on (the batch stopped early at a failed publish).
UPDATE OutboxLease SET LastId = @FromId - 1 WHERE ClaimToken = @ClaimToken AND LastId >= @FromId;

-- name: OutboxLeaseDelete :exec
-- The claim is over (its rows are marked): the whole lease is given back.
DELETE FROM OutboxLease WHERE ClaimToken = @ClaimToken;

-- name: OutboxPurgePublished :exec
DELETE FROM Outbox WHERE Id IN (SELECT Id FROM Outbox WHERE PublishedOn IS NOT NULL AND PublishedOn < @Before LIMIT @Limit);

-- name: ProcessedEventPurge :exec
DELETE FROM ProcessedEvent WHERE rowid IN (SELECT rowid FROM ProcessedEvent WHERE ProcessedOn < @Before LIMIT @Limit);

-- name: CampaignNextWakeUp :one
-- The earliest instant a command becomes due for the sweep: a retry or lookup time, or a
-- lease's end.
SELECT MIN(W) FROM (
    SELECT MIN(NextAttemptOn) AS W FROM CampaignCommand WHERE Status IN ('QUEUED', 'UNKNOWN', 'WAITING_BUDGET') AND NextAttemptOn IS NOT NULL
    UNION ALL
    SELECT MIN(LeaseExpiresOn) AS W FROM CampaignCommand WHERE Status = 'RUNNING'
) AS x;

-- name: CampaignExecutionFind :many
-- One campaign's executions, newest first, below the cursor @BeforeId, with the status
-- and recipient the console filters by ('' = any): a seek of IX_CampaignExecution_Campaign
-- (migration 0021), the filters applied to the rows it reads.
SELECT Id, ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate, Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM CampaignExecution
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Id < @BeforeId
  AND (@Status = '' OR Status = @Status) AND (@RecipientId = '' OR RecipientId = @RecipientId)
ORDER BY Id DESC
LIMIT @Limit;

-- name: CampaignExecutionListByRecipient :many
-- A recipient's executions of every campaign of the unit, newest first, below @BeforeId: a
-- seek of IX_CampaignExecution_Recipient (migration 0055).
SELECT Id, ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate, Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM CampaignExecution
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Id < @BeforeId
ORDER BY Id DESC
LIMIT @Limit;

-- name: CampaignAuditInsert :exec
INSERT INTO CampaignAudit (BusinessUnitId, CampaignId, Action, StatusBefore, StatusAfter, VersionBefore, VersionAfter, Operator, Reason, CreatedOn)
VALUES (@BusinessUnitId, @CampaignId, @Action, @StatusBefore, @StatusAfter, @VersionBefore, @VersionAfter, @Operator, @Reason, @Now);

-- name: CampaignAuditList :many
-- The newest first (IX_CampaignAudit_Campaign, migration 0055).
SELECT Id, BusinessUnitId, CampaignId, Action, StatusBefore, StatusAfter, VersionBefore, VersionAfter, Operator, Reason, CreatedOn
FROM CampaignAudit WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId ORDER BY Id DESC LIMIT @Limit;
