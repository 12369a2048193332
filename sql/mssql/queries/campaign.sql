-- Campaigns, executions, commands, their projection and the outbox relay's lease (SQL Server;
-- docs/campaigns.md; the claims themselves are outbox_claim.sql.tmpl). Same names, parameters
-- and columns as sql/sqlite/queries/campaign.sql.
-- name: CampaignGet :one
SELECT BusinessUnitId, CampaignId, Name, Status, RunId, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM dbo.Campaign WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId;

-- name: CampaignGetForUpdate :one
SELECT BusinessUnitId, CampaignId, Name, Status, RunId, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM dbo.Campaign WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId;

-- name: CampaignInsert :exec
INSERT INTO dbo.Campaign (BusinessUnitId, CampaignId, Name, Status, RunId, DefinitionJson, Version, CreatedOn, UpdatedOn)
VALUES (@BusinessUnitId, @CampaignId, @Name, @Status, @RunId, @DefinitionJson, 1, @Now, @Now);

-- name: CampaignUpdate :exec
-- Guarded by the Version the caller read (If-Match).
UPDATE dbo.Campaign SET Name = @Name, Status = @Status, RunId = @RunId, DefinitionJson = @DefinitionJson,
    Version = Version + 1, UpdatedOn = @Now
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Version = @Version;

-- name: CampaignTriggerDelete :exec
DELETE FROM dbo.CampaignTrigger WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId;

-- name: CampaignTriggerInsert :exec
INSERT INTO dbo.CampaignTrigger (BusinessUnitId, EventType, CampaignId) VALUES (@BusinessUnitId, @EventType, @CampaignId);

-- name: CampaignTriggersOf :many
SELECT EventType FROM dbo.CampaignTrigger WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId ORDER BY EventType;

-- name: CampaignList :many
SELECT TOP (@Limit) BusinessUnitId, CampaignId, Name, Status, RunId, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM dbo.Campaign WHERE BusinessUnitId = @BusinessUnitId AND CampaignId > @AfterId
ORDER BY CampaignId;

-- name: CampaignListByTrigger :many
SELECT c.BusinessUnitId, c.CampaignId, c.Name, c.Status, c.RunId, c.DefinitionJson, c.Version, c.CreatedOn, c.UpdatedOn
FROM dbo.CampaignTrigger t JOIN dbo.Campaign c ON c.BusinessUnitId = t.BusinessUnitId AND c.CampaignId = t.CampaignId
WHERE t.BusinessUnitId = @BusinessUnitId AND t.EventType = @EventType AND c.Status IN ('ACTIVE', 'PAUSED')
ORDER BY c.CampaignId;

-- name: CampaignExecutionInsert :exec
-- A replayed event finds its execution id stored: nothing is inserted (RowsAffected 0).
INSERT INTO dbo.CampaignExecution (ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate,
    Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn)
SELECT @ExecutionId, @BusinessUnitId, @CampaignId, @RunId, @RecipientId, @SourceEventId, @LocalDate,
    'RUNNING', @CurrentIndex, @DefinitionJson, 1, @Now, @Now
WHERE NOT EXISTS (SELECT 1 FROM dbo.CampaignExecution WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE ExecutionId = @ExecutionId);

-- name: CampaignExecutionGet :one
SELECT Id, ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate, Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM dbo.CampaignExecution WHERE ExecutionId = @ExecutionId;

-- name: CampaignExecutionList :many
-- One campaign's executions, newest first, below the cursor @BeforeId: a seek of
-- IX_CampaignExecution_Campaign (migration 0021), then a key lookup per row returned.
SELECT TOP (@Limit) Id, ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate, Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM dbo.CampaignExecution
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Id < @BeforeId
ORDER BY Id DESC;

-- name: CampaignExecutionGetForUpdate :one
SELECT Id, ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate, Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM dbo.CampaignExecution WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE ExecutionId = @ExecutionId;

-- name: CampaignExecutionUpdate :exec
UPDATE dbo.CampaignExecution SET Status = @Status, CurrentIndex = @CurrentIndex, Version = Version + 1, UpdatedOn = @Now
WHERE Id = @Id AND Version = @Version;

-- name: CampaignCommandInsert :exec
-- An existing command id, or another command for the same effect or the same step, is left
-- alone. One NOT EXISTS per unique index (UQ_CampaignCommand_CommandId, _Effect, _Step),
-- each a FORCESEEK with UPDLOCK + HOLDLOCK: the key-range lock covers that one key of that
-- one index. An OR of the three in one subquery could be answered by a scan, and HOLDLOCK
-- would then lock ranges over the whole index.
INSERT INTO dbo.CampaignCommand (CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, RunId, ActionIndex, ActionKey,
    ActionType, Provider, LocalDate, ParamsJson, Status, NextAttemptOn, Revision, Version, CreatedOn, UpdatedOn)
SELECT @CommandId, @EffectKey, @ExecutionId, @BusinessUnitId, @CampaignId, @RecipientId, @RunId, @ActionIndex, @ActionKey,
    @ActionType, @Provider, @LocalDate, NULL, @Status, NULL, 1, 1, @Now, @Now
WHERE NOT EXISTS (SELECT 1 FROM dbo.CampaignCommand WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
                  WHERE CommandId = @CommandId)
  AND NOT EXISTS (SELECT 1 FROM dbo.CampaignCommand WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
                  WHERE BusinessUnitId = @BusinessUnitId AND EffectKey = @EffectKey)
  AND NOT EXISTS (SELECT 1 FROM dbo.CampaignCommand WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
                  WHERE ExecutionId = @ExecutionId AND ActionIndex = @ActionIndex);

-- name: CampaignCommandGet :one
SELECT Id, CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, RunId, ActionIndex, ActionKey, ActionType, Provider, LocalDate, ParamsJson, Status, LeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, ProviderRef, ResultJson, LastError, ResolvedBy, ResolutionReason, Revision, Version, CreatedOn, UpdatedOn, FirstClaimedOn
FROM dbo.CampaignCommand WHERE CommandId = @CommandId;

-- name: CampaignCommandGetForUpdate :one
-- The read of a read-decide-write transaction (UPDLOCK + HOLDLOCK keep the row locked).
SELECT Id, CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, RunId, ActionIndex, ActionKey, ActionType, Provider, LocalDate, ParamsJson, Status, LeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, ProviderRef, ResultJson, LastError, ResolvedBy, ResolutionReason, Revision, Version, CreatedOn, UpdatedOn, FirstClaimedOn
FROM dbo.CampaignCommand WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE CommandId = @CommandId;

-- name: CampaignCommandsOf :many
SELECT Id, CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, RunId, ActionIndex, ActionKey, ActionType, Provider, LocalDate, ParamsJson, Status, LeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, ProviderRef, ResultJson, LastError, ResolvedBy, ResolutionReason, Revision, Version, CreatedOn, UpdatedOn, FirstClaimedOn
FROM dbo.CampaignCommand WHERE ExecutionId = @ExecutionId ORDER BY ActionIndex;

-- name: CampaignCommandUpdate :exec
-- Writes the state decided in Go, guarded by the Version read (the claim token).
UPDATE dbo.CampaignCommand SET ParamsJson = @ParamsJson, Status = @Status, LeaseExpiresOn = @LeaseExpiresOn,
    AttemptCount = @AttemptCount, RetryCount = @RetryCount, NextAttemptOn = @NextAttemptOn, ProviderRef = @ProviderRef,
    ResultJson = @ResultJson, LastError = @LastError, ResolvedBy = @ResolvedBy, ResolutionReason = @ResolutionReason,
    Revision = @Revision, Version = Version + 1, UpdatedOn = @Now, FirstClaimedOn = @FirstClaimedOn
WHERE Id = @Id AND Version = @Version;

-- name: CampaignCommandListDue :many
-- Candidates of a due sweep, oldest first: retries and lookups whose time came, expired
-- leases, and (QueuedBefore) QUEUED commands whose message was lost.
SELECT TOP (@Limit) CommandId
FROM dbo.CampaignCommand
WHERE (Status IN ('QUEUED', 'UNKNOWN', 'WAITING_BUDGET') AND NextAttemptOn IS NOT NULL AND NextAttemptOn <= @Now)
   OR (Status = 'RUNNING' AND LeaseExpiresOn <= @Now)
   OR (Status = 'QUEUED' AND NextAttemptOn IS NULL AND UpdatedOn <= @QueuedBefore)
ORDER BY Id;

-- name: CampaignListUnknown :many
SELECT TOP (@Limit) Id, CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, RunId, ActionIndex, ActionKey, ActionType, Provider, LocalDate, ParamsJson, Status, LeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, ProviderRef, ResultJson, LastError, ResolvedBy, ResolutionReason, Revision, Version, CreatedOn, UpdatedOn, FirstClaimedOn
FROM dbo.CampaignCommand
WHERE BusinessUnitId = @BusinessUnitId AND (@CampaignId = '' OR CampaignId = @CampaignId)
  AND Status = 'UNKNOWN' AND NextAttemptOn IS NULL AND Id > @AfterId
ORDER BY Id;

-- name: CampaignProjectionRevisionForUpdate :one
-- The read of CampaignFactApply (read, then insert or update): UPDLOCK + HOLDLOCK hold the
-- key (or a missing key's range on the primary key) to the end of the transaction, so two
-- projectors of one command serialise and the second updates instead of inserting (2627).
SELECT Revision FROM dbo.CampaignCommandProjection WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE CommandId = @CommandId;

-- name: CampaignProjectionInsert :exec
INSERT INTO dbo.CampaignCommandProjection (CommandId, BusinessUnitId, CampaignId, RunId, RecipientId, LocalDate, Status, Revision)
VALUES (@CommandId, @BusinessUnitId, @CampaignId, @RunId, @RecipientId, @LocalDate, @Status, @Revision);

-- name: CampaignProjectionUpdate :exec
UPDATE dbo.CampaignCommandProjection SET Status = @Status, Revision = @Revision
WHERE CommandId = @CommandId AND Revision < @Revision;

-- name: CampaignProjectionFreshTo :one
SELECT FreshTo FROM dbo.CampaignProjectionState WHERE Id = 1;

-- name: CampaignProjectionSetFreshTo :exec
-- lint: no FORCESEEK: a MERGE target takes only <table_hint_limited> and INDEX (MERGE's
-- merge_hint syntax); the ON clause is an equality on the whole primary key (Id = 1, the one
-- row), a seek.
MERGE dbo.CampaignProjectionState WITH (HOLDLOCK) AS t USING (SELECT 1 AS Id) AS s ON t.Id = s.Id
WHEN MATCHED AND (t.FreshTo IS NULL OR t.FreshTo < @FreshTo) THEN UPDATE SET FreshTo = @FreshTo
WHEN NOT MATCHED THEN INSERT (Id, FreshTo) VALUES (1, @FreshTo);

-- name: CampaignCountsByDay :many
SELECT LocalDate, Status, COUNT(*)
FROM dbo.CampaignCommandProjection
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND LocalDate >= @FromDate AND LocalDate <= @ToDate
GROUP BY LocalDate, Status
ORDER BY LocalDate, Status;

-- name: CampaignMetricsCommands :one
-- One business unit's commands, or every unit's when @BusinessUnitId is ''.
SELECT COALESCE(SUM(CASE WHEN Status = 'QUEUED' THEN 1 ELSE 0 END), 0),
       COALESCE(SUM(CASE WHEN Status = 'UNKNOWN' THEN 1 ELSE 0 END), 0),
       COALESCE(SUM(CASE WHEN Status = 'RUNNING' AND LeaseExpiresOn <= @Now THEN 1 ELSE 0 END), 0)
FROM dbo.CampaignCommand WHERE Status IN ('QUEUED', 'UNKNOWN', 'RUNNING') AND (@BusinessUnitId = '' OR BusinessUnitId = @BusinessUnitId);

-- name: CampaignMetricsOutbox :one
SELECT COUNT(*), MIN(CreatedOn) FROM dbo.Outbox WHERE PublishedOn IS NULL;

-- name: OutboxBacklogCount :one
-- The backpressure gate's count (delivery.Backlog): the unpublished rows alone, answered from
-- the partial index of unpublished rows without reading the table (CampaignMetricsOutbox's
-- MIN(CreatedOn) reads every unpublished row's table row: 8x the cost at 40,000 rows).
SELECT COUNT(*) FROM dbo.Outbox WHERE PublishedOn IS NULL;

-- name: OutboxClaimLock :exec
-- Serializes claims for the rest of the transaction: two relays never read the same free
-- rows before either wrote its lease.
EXEC sp_getapplock N'automation:OutboxClaim', N'Exclusive', N'Transaction', 30000;
IF APPLOCK_MODE(N'public', N'automation:OutboxClaim', N'Transaction') <> N'Exclusive'
    THROW 51000, N'OutboxClaim: the claim lock was not granted', 1;

-- name: OutboxLeaseExpire :exec
DELETE FROM dbo.OutboxLease WHERE LeaseUntil <= @Now;

-- name: OutboxLeaseInsert :exec
-- @SkipDestinations: NULL, or the claim's @Skip (the destinations whose rows it left out).
INSERT INTO dbo.OutboxLease (ClaimToken, FirstId, LastId, LeaseUntil, SkipDestinations) VALUES (@ClaimToken, @FirstId, @LastId, @LeaseUntil, @SkipDestinations);

-- name: OutboxRetryLater :exec
UPDATE dbo.Outbox SET Attempts = Attempts + 1, RetryAt = @RetryAt, LeaseUntil = NULL, ClaimToken = NULL
WHERE Id = @Id AND PublishedOn IS NULL
  AND EXISTS (SELECT 1 FROM dbo.OutboxLease WHERE ClaimToken = @ClaimToken AND FirstId <= @Id AND LastId >= @Id);

-- name: OutboxLeaseShrink :exec
UPDATE dbo.OutboxLease SET LastId = @FromId - 1 WHERE ClaimToken = @ClaimToken AND LastId >= @FromId;

-- name: OutboxLeaseDelete :exec
DELETE FROM dbo.OutboxLease WHERE ClaimToken = @ClaimToken;

-- name: OutboxPurgePublished :exec
DELETE TOP (@Limit) FROM dbo.Outbox WHERE PublishedOn IS NOT NULL AND PublishedOn < @Before;

-- name: ProcessedEventPurge :exec
DELETE TOP (@Limit) FROM dbo.ProcessedEvent WHERE ProcessedOn < @Before;

-- name: CampaignNextWakeUp :one
-- The earliest instant a command becomes due for the sweep: a retry or lookup time, or a
-- lease's end.
SELECT MIN(W) FROM (
    SELECT MIN(NextAttemptOn) AS W FROM dbo.CampaignCommand WHERE Status IN ('QUEUED', 'UNKNOWN', 'WAITING_BUDGET') AND NextAttemptOn IS NOT NULL
    UNION ALL
    SELECT MIN(LeaseExpiresOn) AS W FROM dbo.CampaignCommand WHERE Status = 'RUNNING'
) AS x;

-- name: CampaignExecutionFind :many
-- One campaign's executions, newest first, below the cursor @BeforeId, with the status
-- and recipient the console filters by (N'' = any): a seek of IX_CampaignExecution_Campaign
-- (migration 0021), the filters applied to the rows it reads.
SELECT TOP (@Limit) Id, ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate, Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM dbo.CampaignExecution
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Id < @BeforeId
  AND (@Status = N'' OR Status = @Status) AND (@RecipientId = N'' OR RecipientId = @RecipientId)
ORDER BY Id DESC;

-- name: CampaignExecutionListByRecipient :many
-- A recipient's executions of every campaign of the unit, newest first, below @BeforeId: a
-- seek of IX_CampaignExecution_Recipient (migration 0055), then a key lookup per row.
SELECT TOP (@Limit) Id, ExecutionId, BusinessUnitId, CampaignId, RunId, RecipientId, SourceEventId, LocalDate, Status, CurrentIndex, DefinitionJson, Version, CreatedOn, UpdatedOn
FROM dbo.CampaignExecution
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Id < @BeforeId
ORDER BY Id DESC;

-- name: CampaignAuditInsert :exec
INSERT INTO dbo.CampaignAudit (BusinessUnitId, CampaignId, Action, StatusBefore, StatusAfter, VersionBefore, VersionAfter, Operator, Reason, CreatedOn)
VALUES (@BusinessUnitId, @CampaignId, @Action, @StatusBefore, @StatusAfter, @VersionBefore, @VersionAfter, @Operator, @Reason, @Now);

-- name: CampaignAuditList :many
-- The newest first (IX_CampaignAudit_Campaign, migration 0055).
SELECT TOP (@Limit) Id, BusinessUnitId, CampaignId, Action, StatusBefore, StatusAfter, VersionBefore, VersionAfter, Operator, Reason, CreatedOn
FROM dbo.CampaignAudit WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId ORDER BY Id DESC;
