-- Budgets and fees (SQLite; docs/budgets.md). Column orders of every read:
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
INSERT INTO PricePolicy (BusinessUnitId, ActionType, Formula, Rate, Unit, TransferType, Currency, MinFee, MaxFee,
                         ConvertTo, ConversionRate, Version, UpdatedOn, UpdatedBy)
SELECT @BusinessUnitId, @ActionType, @Formula, @Rate, @Unit, @TransferType, @Currency, @MinFee, @MaxFee,
       @ConvertTo, @ConversionRate, 1, @Now, @Operator
WHERE NOT EXISTS (SELECT 1 FROM PricePolicy WHERE BusinessUnitId = @BusinessUnitId AND ActionType = @ActionType);

-- name: PricePolicyUpdate :exec
UPDATE PricePolicy SET Formula = @Formula, Rate = @Rate, Unit = @Unit, TransferType = @TransferType, Currency = @Currency,
       MinFee = @MinFee, MaxFee = @MaxFee, ConvertTo = @ConvertTo, ConversionRate = @ConversionRate,
       Version = Version + 1, UpdatedOn = @Now, UpdatedBy = @Operator
WHERE BusinessUnitId = @BusinessUnitId AND ActionType = @ActionType AND Version = @ExpectedVersion;

-- name: PricePolicyGet :one
SELECT BusinessUnitId, ActionType, Formula, Rate, Unit, TransferType, Currency, MinFee, MaxFee,
       ConvertTo, ConversionRate, Version, UpdatedOn, UpdatedBy
FROM PricePolicy WHERE BusinessUnitId = @BusinessUnitId AND ActionType = @ActionType;

-- name: PricePolicyList :many
SELECT BusinessUnitId, ActionType, Formula, Rate, Unit, TransferType, Currency, MinFee, MaxFee,
       ConvertTo, ConversionRate, Version, UpdatedOn, UpdatedBy
FROM PricePolicy WHERE BusinessUnitId = @BusinessUnitId ORDER BY ActionType;

-- name: CommandPriceInsert :exec
INSERT INTO CommandPrice (CommandId, BusinessUnitId, CampaignId, ActionType, Amount, Currency, PriceJson, FrozenOn)
SELECT @CommandId, @BusinessUnitId, @CampaignId, @ActionType, @Amount, @Currency, @PriceJson, @Now
WHERE NOT EXISTS (SELECT 1 FROM CommandPrice WHERE CommandId = @CommandId);

-- name: CommandPriceGet :one
SELECT CommandId, BusinessUnitId, CampaignId, ActionType, Amount, Currency, PriceJson, FrozenOn
FROM CommandPrice WHERE CommandId = @CommandId;

-- name: BudgetInsert :exec
INSERT INTO CampaignBudget (BusinessUnitId, CampaignId, Currency, MaxCost, Cost, ReservedCost, Status, PausedReason,
                            Version, CreatedOn, UpdatedOn)
SELECT @BusinessUnitId, @CampaignId, @Currency, @MaxCost, 0, 0, 'ACTIVE', NULL, 1, @Now, @Now
WHERE NOT EXISTS (SELECT 1 FROM CampaignBudget WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId);

-- name: BudgetGet :one
SELECT BusinessUnitId, CampaignId, Currency, MaxCost, Cost, ReservedCost, Status, PausedReason, Version, CreatedOn, UpdatedOn
FROM CampaignBudget WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId;

-- name: BudgetSetMaxCost :exec
-- Guarded by Version and by the committed amount; a budget paused for BUDGET resumes when room is left.
UPDATE CampaignBudget SET MaxCost = @MaxCost, Version = Version + 1, UpdatedOn = @Now,
       Status = CASE WHEN Status = 'PAUSED' AND PausedReason = 'BUDGET' AND Cost + ReservedCost < @MaxCost THEN 'ACTIVE' ELSE Status END,
       PausedReason = CASE WHEN Status = 'PAUSED' AND PausedReason = 'BUDGET' AND Cost + ReservedCost < @MaxCost THEN NULL ELSE PausedReason END
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Version = @ExpectedVersion
  AND Cost + ReservedCost <= @MaxCost;

-- name: BudgetSetStatus :exec
-- @ExpectedVersion 0 = unguarded, only for the worker's own pauses (the store refuses 0 with an Operator); nothing happens when the status and reason are already these.
UPDATE CampaignBudget SET Status = @Status, PausedReason = @Reason, Version = Version + 1, UpdatedOn = @Now
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId
  AND (@ExpectedVersion = 0 OR Version = @ExpectedVersion)
  AND NOT (Status = @Status AND COALESCE(PausedReason, '') = COALESCE(@Reason, ''));

-- name: BudgetReserveAmount :exec
-- THE reservation: one conditional update; RowsAffected 0 = not enough budget (or no budget).
UPDATE CampaignBudget SET ReservedCost = ReservedCost + @Amount, UpdatedOn = @Now
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Currency = @Currency
  AND Cost + ReservedCost + @Amount <= MaxCost;

-- name: BudgetConsume :exec
UPDATE CampaignBudget SET Cost = Cost + @Amount, ReservedCost = ReservedCost - @Amount, UpdatedOn = @Now
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND ReservedCost >= @Amount;

-- name: BudgetUnreserve :exec
UPDATE CampaignBudget SET ReservedCost = ReservedCost - @Amount, UpdatedOn = @Now
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND ReservedCost >= @Amount;

-- name: ReservationGet :one
SELECT Id, CommandId, BusinessUnitId, CampaignId, Amount, Currency, Status, Attempt, OrderId, ActionStatus, CreatedOn, UpdatedOn
FROM BudgetReservation WHERE CommandId = @CommandId;

-- name: ReservationGetForUpdate :one
-- ReservationGet inside a write transaction (the release's re-read under the budget's lock):
-- the transaction already holds SQLite's one write lock (BEGIN IMMEDIATE), so no hint.
SELECT Id, CommandId, BusinessUnitId, CampaignId, Amount, Currency, Status, Attempt, OrderId, ActionStatus, CreatedOn, UpdatedOn
FROM BudgetReservation WHERE CommandId = @CommandId;

-- name: ReservationInsert :exec
INSERT INTO BudgetReservation (CommandId, BusinessUnitId, CampaignId, Amount, Currency, Status, Attempt, OrderId,
                               ActionStatus, CreatedOn, UpdatedOn)
VALUES (@CommandId, @BusinessUnitId, @CampaignId, @Amount, @Currency, 'HELD', 1, @OrderId, NULL, @Now, @Now);

-- name: ReservationRehold :exec
UPDATE BudgetReservation SET Status = 'HELD', Attempt = Attempt + 1, OrderId = @OrderId, Amount = @Amount, UpdatedOn = @Now
WHERE CommandId = @CommandId AND Status = 'RELEASED' AND Attempt = @Attempt;

-- name: ReservationSetStatus :exec
-- HELD → CONSUMED or RELEASED for the attempt and order the caller read: a row held again
-- since (another Attempt, another OrderId) is left alone (RowsAffected 0).
UPDATE BudgetReservation SET Status = @Status, ActionStatus = COALESCE(@ActionStatus, ActionStatus), UpdatedOn = @Now
WHERE CommandId = @CommandId AND Status = 'HELD' AND Attempt = @Attempt AND OrderId = @OrderId;

-- name: ReservationSetActionStatus :exec
UPDATE BudgetReservation SET ActionStatus = @ActionStatus, UpdatedOn = @Now WHERE CommandId = @CommandId;

-- name: ReservationStats :one
SELECT COUNT(*), COALESCE(SUM(Amount), 0), MIN(CreatedOn)
FROM BudgetReservation WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Status = 'HELD';

-- name: FeeTransferInsert :exec
INSERT INTO FeeTransfer (OrderId, CommandId, ReservationId, Attempt, BusinessUnitId, CampaignId, Amount, Currency,
                         TransferType, Day, Status, CostAdded, ProviderReference, LastError, Checks, Revision,
                         ResolvedBy, ResolutionReason, CreatedOn, UpdatedOn)
VALUES (@OrderId, @CommandId, @ReservationId, @Attempt, @BusinessUnitId, @CampaignId, @Amount, @Currency,
        @TransferType, @Day, 'PENDING', 0, NULL, NULL, 0, 1, NULL, NULL, @Now, @Now);

-- name: FeeTransferGet :one
SELECT Id, OrderId, CommandId, ReservationId, Attempt, BusinessUnitId, CampaignId, Amount, Currency, TransferType, Day,
       Status, CostAdded, ProviderReference, LastError, Checks, Revision, ResolvedBy, ResolutionReason, CreatedOn, UpdatedOn
FROM FeeTransfer WHERE OrderId = @OrderId;

-- name: FeeTransferGetForUpdate :one
-- FeeTransferGet as the first read of FeeTransferBegin (read, then insert when missing): the
-- transaction already holds SQLite's one write lock, so no hint.
SELECT Id, OrderId, CommandId, ReservationId, Attempt, BusinessUnitId, CampaignId, Amount, Currency, TransferType, Day,
       Status, CostAdded, ProviderReference, LastError, Checks, Revision, ResolvedBy, ResolutionReason, CreatedOn, UpdatedOn
FROM FeeTransfer WHERE OrderId = @OrderId;

-- name: FeeTransferUpdate :exec
-- A change guarded by the revision read in the same transaction.
UPDATE FeeTransfer SET Status = @Status, CostAdded = @CostAdded, ProviderReference = COALESCE(@ProviderReference, ProviderReference),
       LastError = @LastError, Checks = Checks + 1, Revision = @NewRevision,
       ResolvedBy = COALESCE(@ResolvedBy, ResolvedBy), ResolutionReason = COALESCE(@ResolutionReason, ResolutionReason), UpdatedOn = @Now
WHERE OrderId = @OrderId AND Revision = @Revision;

-- name: FeeTransferList :many
SELECT Id, OrderId, CommandId, ReservationId, Attempt, BusinessUnitId, CampaignId, Amount, Currency, TransferType, Day,
       Status, CostAdded, ProviderReference, LastError, Checks, Revision, ResolvedBy, ResolutionReason, CreatedOn, UpdatedOn
FROM FeeTransfer
WHERE Status IN (@S1, @S2, @S3, @S4) AND Id > @AfterId AND UpdatedOn <= @UpdatedBefore
  AND (@BusinessUnitId = '' OR BusinessUnitId = @BusinessUnitId)
ORDER BY Id LIMIT @Limit;

-- name: BudgetWaitUpsert :exec
INSERT INTO BudgetWait (CommandId, BusinessUnitId, CampaignId, Reason, Amount, Currency, Since)
VALUES (@CommandId, @BusinessUnitId, @CampaignId, @Reason, @Amount, @Currency, @Now)
ON CONFLICT (CommandId) DO UPDATE SET Reason = excluded.Reason, Amount = excluded.Amount;

-- name: BudgetWaitDelete :exec
DELETE FROM BudgetWait WHERE CommandId = @CommandId;

-- name: BudgetWaitGet :one
-- One command's wait, by its primary key.
SELECT CommandId, BusinessUnitId, CampaignId, Reason, Amount, Currency, Since
FROM BudgetWait WHERE CommandId = @CommandId;

-- name: BudgetWaitList :many
SELECT CommandId, BusinessUnitId, CampaignId, Reason, Amount, Currency, Since
FROM BudgetWait WHERE BusinessUnitId = @BusinessUnitId ORDER BY Since, CommandId LIMIT @Limit;

-- name: FeeProjectionUpsert :exec
-- Only a higher revision replaces the order's projected state (RowsAffected 0 = stale).
INSERT INTO CampaignFeeProjection (OrderId, CommandId, BusinessUnitId, CampaignId, Revision, FeeStatus, Amount, Currency, Day, UpdatedOn)
VALUES (@OrderId, @CommandId, @BusinessUnitId, @CampaignId, @Revision, @FeeStatus, @Amount, @Currency, @Day, @Now)
ON CONFLICT (OrderId) DO UPDATE SET Revision = excluded.Revision, FeeStatus = excluded.FeeStatus, Amount = excluded.Amount,
       Day = excluded.Day, UpdatedOn = excluded.UpdatedOn
WHERE excluded.Revision > CampaignFeeProjection.Revision;

-- name: FeeCostByDay :many
SELECT Day, COALESCE(SUM(Amount), 0), COUNT(*), MIN(Currency)
FROM CampaignFeeProjection
WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND FeeStatus = 'SUCCEEDED' AND Day >= @FromDay AND Day <= @ToDay
GROUP BY Day ORDER BY Day;

-- name: FeeReconcile :one
SELECT COALESCE((SELECT Cost FROM CampaignBudget WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId), 0),
       COALESCE((SELECT SUM(Amount) FROM FeeTransfer WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Status = 'SUCCEEDED' AND CostAdded = 1), 0),
       COALESCE((SELECT SUM(Amount) FROM CampaignFeeProjection WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND FeeStatus = 'SUCCEEDED'), 0),
       (SELECT COUNT(*) FROM FeeTransfer WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND Status = 'SUCCEEDED' AND CostAdded = 1),
       (SELECT COUNT(*) FROM CampaignFeeProjection WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId AND FeeStatus = 'SUCCEEDED');

-- name: BudgetAuditInsert :exec
INSERT INTO BudgetAudit (BusinessUnitId, CampaignId, Subject, Action, Operator, Reason, BeforeJson, AfterJson, CreatedOn)
VALUES (@BusinessUnitId, @CampaignId, @Subject, @Action, @Operator, @Reason, @BeforeJson, @AfterJson, @Now);

-- name: BudgetAuditList :many
SELECT Id, BusinessUnitId, CampaignId, Subject, Action, Operator, Reason, BeforeJson, AfterJson, CreatedOn
FROM BudgetAudit WHERE BusinessUnitId = @BusinessUnitId AND CampaignId = @CampaignId ORDER BY Id DESC LIMIT @Limit;
