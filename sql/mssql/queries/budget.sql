-- Budgets and fees (SQL Server); the same names, parameters and columns as
-- sql/sqlite/queries/budget.sql (docs/budgets.md). Column orders of every read:
-- PricePolicy: BusinessUnitId, ActionType, Formula, Rate, Unit, TransferType, Currency, MinFee, MaxFee,
--   ConvertTo, ConversionRate, Version, UpdatedOn, UpdatedBy
-- CampaignBudget: BusinessUnitId, CampaignId, Currency, MaxCost, Cost, ReservedCost, Status, PausedReason,
--   Version, CreatedOn, UpdatedOn
-- BudgetReservation: Id, CommandId, BusinessUnitId, CampaignId, Amount, Currency, Status, Attempt, OrderId,
--   ActionStatus, CreatedOn, UpdatedOn
-- FeeTransfer: Id, OrderId, CommandId, ReservationId, Attempt, BusinessUnitId, CampaignId, Amount, Currency,
--   TransferType, Day, Status, CostAdded, ProviderReference, LastError, Checks, Revision, ResolvedBy,
--   ResolutionReason, CreatedOn, UpdatedOn

-- name: PricePolicyInsert :exec
INSERT INTO dbo.PricePolicy (BusinessUnitId, ActionType, Formula, Rate, Unit, TransferType, Currency, MinFee, MaxFee,
                         ConvertTo, ConversionRate, Version, UpdatedOn, UpdatedBy)
SELECT @BusinessUnitId, @ActionType, @Formula, @Rate, @Unit, @TransferType, @Currency, @MinFee, @MaxFee,
       @ConvertTo, @ConversionRate, 1, @Now, @Operator
WHERE NOT EXISTS (SELECT 1 FROM dbo.PricePolicy WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE BusinessUnitId = @BusinessUnitId AND ActionType = @ActionType);

-- name: PricePolicyUpdate :exec
UPDATE dbo.PricePolicy SET Formula = @Formula, Rate = @Rate, Unit = @Unit, TransferType = @TransferType, Currency = @Currency,
       MinFee = @MinFee, MaxFee = @MaxFee, ConvertTo = @ConvertTo, ConversionRate = @ConversionRate,
       Version = Version + 1, UpdatedOn = @Now, UpdatedBy = @Operator
WHERE BusinessUnitId = @BusinessUnitId AND ActionType = @ActionType AND Version = @ExpectedVersion;

-- name: PricePolicyGet :one
SELECT BusinessUnitId, ActionType, Formula, Rate, Unit, TransferType, Currency, MinFee, MaxFee,
       ConvertTo, ConversionRate, Version, UpdatedOn, UpdatedBy
FROM dbo.PricePolicy WHERE BusinessUnitId = @BusinessUnitId AND ActionType = @ActionType;

-- name: PricePolicyList :many
SELECT BusinessUnitId, ActionType, Formula, Rate, Unit, TransferType, Currency, MinFee, MaxFee,
       ConvertTo, ConversionRate, Version, UpdatedOn, UpdatedBy
FROM dbo.PricePolicy WHERE BusinessUnitId = @BusinessUnitId ORDER BY ActionType;

-- name: CommandPriceInsert :exec
INSERT INTO dbo.CommandPrice (CommandId, BusinessUnitId, CampaignId, ActionType, Amount, Currency, PriceJson, FrozenOn)
SELECT @CommandId, @BusinessUnitId, @CampaignId, @ActionType, @Amount, @Currency, @PriceJson, @Now
WHERE NOT EXISTS (SELECT 1 FROM dbo.CommandPrice WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE CommandId = @CommandId);

-- name: CommandPriceGet :one
SELECT CommandId, BusinessUnitId, CampaignId, ActionType, Amount, Currency, PriceJson, FrozenOn
FROM dbo.CommandPrice WHERE CommandId = @CommandId;

-- name: BudgetInsert :exec
INSERT INTO dbo.CampaignBudget (BusinessUnitId, CampaignId, Currency, MaxCost, Cost, ReservedCost, Status, PausedReason,
                            Version, CreatedOn, UpdatedOn)
SELECT @BusinessUnitId, @CampaignId, @Currency, @MaxCost, 0, 0, N'ACTIVE', NULL, 1, @Now, @Now
WHERE NOT EXISTS (SELECT 1 FROM dbo.CampaignBudget WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId);

-- name: BudgetGet :one
-- UPDLOCK: every write transaction reads the budget first; the lock orders them (SQLite: BEGIN IMMEDIATE).
SELECT BusinessUnitId, CampaignId, Currency, MaxCost, Cost, ReservedCost, Status, PausedReason, Version, CreatedOn, UpdatedOn
FROM dbo.CampaignBudget WITH (UPDLOCK) WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId;

-- name: BudgetSetMaxCost :exec
-- Guarded by Version and by the committed amount; a budget paused for BUDGET resumes when room is left.
UPDATE dbo.CampaignBudget SET MaxCost = @MaxCost, Version = Version + 1, UpdatedOn = @Now,
       Status = CASE WHEN Status = N'PAUSED' AND PausedReason = N'BUDGET' AND Cost + ReservedCost < @MaxCost THEN N'ACTIVE' ELSE Status END,
       PausedReason = CASE WHEN Status = N'PAUSED' AND PausedReason = N'BUDGET' AND Cost + ReservedCost < @MaxCost THEN NULL ELSE PausedReason END
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Version = @ExpectedVersion
  AND Cost + ReservedCost <= @MaxCost;

-- name: BudgetSetStatus :exec
-- @ExpectedVersion 0 = unguarded, only for the worker's own pauses (the store refuses 0 with an Operator); nothing happens when the status and reason are already these.
UPDATE dbo.CampaignBudget SET Status = @Status, PausedReason = @Reason, Version = Version + 1, UpdatedOn = @Now
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId
  AND (@ExpectedVersion = 0 OR Version = @ExpectedVersion)
  AND NOT (Status = @Status AND COALESCE(PausedReason, N'') = COALESCE(@Reason, N''));

-- name: BudgetReserveAmount :exec
-- THE reservation: one conditional update; RowsAffected 0 = not enough budget (or no budget).
UPDATE dbo.CampaignBudget SET ReservedCost = ReservedCost + @Amount, UpdatedOn = @Now
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Currency = @Currency
  AND Cost + ReservedCost + @Amount <= MaxCost;

-- name: BudgetConsume :exec
UPDATE dbo.CampaignBudget SET Cost = Cost + @Amount, ReservedCost = ReservedCost - @Amount, UpdatedOn = @Now
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND ReservedCost >= @Amount;

-- name: BudgetUnreserve :exec
UPDATE dbo.CampaignBudget SET ReservedCost = ReservedCost - @Amount, UpdatedOn = @Now
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND ReservedCost >= @Amount;

-- name: ReservationGet :one
SELECT Id, CommandId, BusinessUnitId, CampaignId, Amount, Currency, Status, Attempt, OrderId, ActionStatus, CreatedOn, UpdatedOn
FROM dbo.BudgetReservation WHERE CommandId = @CommandId;

-- name: ReservationGetForUpdate :one
-- The release's re-read of the reservation under the budget's lock (sqlstore releaseIn):
-- UPDLOCK + HOLDLOCK keep the row locked to the end of the transaction, a seek of
-- UQ_BudgetReservation_Command.
SELECT Id, CommandId, BusinessUnitId, CampaignId, Amount, Currency, Status, Attempt, OrderId, ActionStatus, CreatedOn, UpdatedOn
FROM dbo.BudgetReservation WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE CommandId = @CommandId;

-- name: ReservationInsert :exec
INSERT INTO dbo.BudgetReservation (CommandId, BusinessUnitId, CampaignId, Amount, Currency, Status, Attempt, OrderId,
                               ActionStatus, CreatedOn, UpdatedOn)
VALUES (@CommandId, @BusinessUnitId, @CampaignId, @Amount, @Currency, N'HELD', 1, @OrderId, NULL, @Now, @Now);

-- name: ReservationRehold :exec
UPDATE dbo.BudgetReservation SET Status = N'HELD', Attempt = Attempt + 1, OrderId = @OrderId, Amount = @Amount, UpdatedOn = @Now
WHERE CommandId = @CommandId AND Status = N'RELEASED' AND Attempt = @Attempt;

-- name: ReservationSetStatus :exec
-- HELD → CONSUMED or RELEASED for the attempt and order the caller read: a row held again
-- since (another Attempt, another OrderId) is left alone (RowsAffected 0).
UPDATE dbo.BudgetReservation SET Status = @Status, ActionStatus = COALESCE(@ActionStatus, ActionStatus), UpdatedOn = @Now
WHERE CommandId = @CommandId AND Status = N'HELD' AND Attempt = @Attempt AND OrderId = @OrderId;

-- name: ReservationSetActionStatus :exec
UPDATE dbo.BudgetReservation SET ActionStatus = @ActionStatus, UpdatedOn = @Now WHERE CommandId = @CommandId;

-- name: ReservationStats :one
SELECT COUNT(*), COALESCE(SUM(Amount), 0), MIN(CreatedOn)
FROM dbo.BudgetReservation WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Status = N'HELD';

-- name: FeeTransferInsert :exec
INSERT INTO dbo.FeeTransfer (OrderId, CommandId, ReservationId, Attempt, BusinessUnitId, CampaignId, Amount, Currency,
                         TransferType, Day, Status, CostAdded, ProviderReference, LastError, Checks, Revision,
                         ResolvedBy, ResolutionReason, CreatedOn, UpdatedOn)
VALUES (@OrderId, @CommandId, @ReservationId, @Attempt, @BusinessUnitId, @CampaignId, @Amount, @Currency,
        @TransferType, @Day, N'PENDING', 0, NULL, NULL, 0, 1, NULL, NULL, @Now, @Now);

-- name: FeeTransferGet :one
SELECT Id, OrderId, CommandId, ReservationId, Attempt, BusinessUnitId, CampaignId, Amount, Currency, TransferType, Day,
       Status, CostAdded, ProviderReference, LastError, Checks, Revision, ResolvedBy, ResolutionReason, CreatedOn, UpdatedOn
FROM dbo.FeeTransfer WHERE OrderId = @OrderId;

-- name: FeeTransferGetForUpdate :one
-- The first read of FeeTransferBegin (read, then insert when missing): UPDLOCK + HOLDLOCK
-- hold the key (or, for a missing order, its key range on UQ_FeeTransfer_Order) to the end of
-- the transaction, so a second begin of the order waits and then finds the first one's row
-- instead of failing on the unique index (2627).
SELECT Id, OrderId, CommandId, ReservationId, Attempt, BusinessUnitId, CampaignId, Amount, Currency, TransferType, Day,
       Status, CostAdded, ProviderReference, LastError, Checks, Revision, ResolvedBy, ResolutionReason, CreatedOn, UpdatedOn
FROM dbo.FeeTransfer WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE OrderId = @OrderId;

-- name: FeeTransferUpdate :exec
-- A change guarded by the revision read in the same transaction.
UPDATE dbo.FeeTransfer SET Status = @Status, CostAdded = @CostAdded, ProviderReference = COALESCE(@ProviderReference, ProviderReference),
       LastError = @LastError, Checks = Checks + 1, Revision = @NewRevision,
       ResolvedBy = COALESCE(@ResolvedBy, ResolvedBy), ResolutionReason = COALESCE(@ResolutionReason, ResolutionReason), UpdatedOn = @Now
WHERE OrderId = @OrderId AND Revision = @Revision;

-- name: FeeTransferList :many
SELECT TOP (@Limit) Id, OrderId, CommandId, ReservationId, Attempt, BusinessUnitId, CampaignId, Amount, Currency, TransferType, Day,
       Status, CostAdded, ProviderReference, LastError, Checks, Revision, ResolvedBy, ResolutionReason, CreatedOn, UpdatedOn
FROM dbo.FeeTransfer
WHERE Status IN (@S1, @S2, @S3, @S4) AND Id > @AfterId AND UpdatedOn <= @UpdatedBefore
  AND (@BusinessUnitId = N'' OR BusinessUnitId = @BusinessUnitId)
ORDER BY Id;
-- name: BudgetWaitUpsert :exec
-- lint: no FORCESEEK: a MERGE target takes only <table_hint_limited> and INDEX (MERGE's
-- merge_hint syntax); the ON clause is an equality on the whole clustered primary key for a
-- one-row source, a seek.
-- UPDLOCK + HOLDLOCK serialise two upserts of one command (SQLite: ON CONFLICT DO UPDATE).
MERGE dbo.BudgetWait WITH (UPDLOCK, HOLDLOCK) AS t
USING (SELECT @CommandId AS CommandId) AS src ON t.CommandId = src.CommandId
WHEN MATCHED THEN UPDATE SET Reason = @Reason, Amount = @Amount
WHEN NOT MATCHED THEN INSERT (CommandId, BusinessUnitId, CampaignId, Reason, Amount, Currency, Since)
     VALUES (@CommandId, @BusinessUnitId, @CampaignId, @Reason, @Amount, @Currency, @Now);
-- name: BudgetWaitDelete :exec
DELETE FROM dbo.BudgetWait WHERE CommandId = @CommandId;

-- name: BudgetWaitGet :one
-- One command's wait, by its primary key (a seek of PK_BudgetWait).
SELECT CommandId, BusinessUnitId, CampaignId, Reason, Amount, Currency, Since
FROM dbo.BudgetWait WHERE CommandId = @CommandId;
-- name: BudgetWaitList :many
SELECT TOP (@Limit) CommandId, BusinessUnitId, CampaignId, Reason, Amount, Currency, Since
FROM dbo.BudgetWait WHERE BusinessUnitId = @BusinessUnitId ORDER BY Since, CommandId;
-- name: FeeProjectionUpsert :exec
-- lint: no FORCESEEK: a MERGE target takes only <table_hint_limited> and INDEX (MERGE's
-- merge_hint syntax); the ON clause is an equality on the whole clustered primary key for a
-- one-row source, a seek.
-- Only a higher revision replaces the order's projected state (RowsAffected 0 = stale).
MERGE dbo.CampaignFeeProjection WITH (UPDLOCK, HOLDLOCK) AS t
USING (SELECT @OrderId AS OrderId) AS src ON t.OrderId = src.OrderId
WHEN MATCHED AND @Revision > t.Revision THEN
     UPDATE SET Revision = @Revision, FeeStatus = @FeeStatus, Amount = @Amount, Day = @Day, UpdatedOn = @Now
WHEN NOT MATCHED THEN
     INSERT (OrderId, CommandId, BusinessUnitId, CampaignId, Revision, FeeStatus, Amount, Currency, Day, UpdatedOn)
     VALUES (@OrderId, @CommandId, @BusinessUnitId, @CampaignId, @Revision, @FeeStatus, @Amount, @Currency, @Day, @Now);
-- name: FeeCostByDay :many
SELECT Day, COALESCE(SUM(Amount), 0), COUNT(*), MIN(Currency)
FROM dbo.CampaignFeeProjection
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND FeeStatus = N'SUCCEEDED' AND Day >= @FromDay AND Day <= @ToDay
GROUP BY Day ORDER BY Day;

-- name: FeeReconcile :one
SELECT COALESCE((SELECT Cost FROM dbo.CampaignBudget WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId), 0),
       COALESCE((SELECT SUM(Amount) FROM dbo.FeeTransfer WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Status = N'SUCCEEDED' AND CostAdded = 1), 0),
       COALESCE((SELECT SUM(Amount) FROM dbo.CampaignFeeProjection WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND FeeStatus = N'SUCCEEDED'), 0),
       (SELECT COUNT(*) FROM dbo.FeeTransfer WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Status = N'SUCCEEDED' AND CostAdded = 1),
       (SELECT COUNT(*) FROM dbo.CampaignFeeProjection WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND FeeStatus = N'SUCCEEDED');

-- name: BudgetAuditInsert :exec
INSERT INTO dbo.BudgetAudit (BusinessUnitId, CampaignId, Subject, Action, Operator, Reason, BeforeJson, AfterJson, CreatedOn)
VALUES (@BusinessUnitId, @CampaignId, @Subject, @Action, @Operator, @Reason, @BeforeJson, @AfterJson, @Now);

-- name: BudgetAuditList :many
SELECT TOP (@Limit) Id, BusinessUnitId, CampaignId, Subject, Action, Operator, Reason, BeforeJson, AfterJson, CreatedOn
FROM dbo.BudgetAudit WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId ORDER BY Id DESC;