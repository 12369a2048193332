-- +goose Up
-- Budgets and fees (docs/budgets.md). Amounts are INTEGER minor units of the row's ISO 4217
-- Currency; instants INTEGER milliseconds since the Unix epoch, UTC.

-- One price per business unit and action type; Rate and ConversionRate are exact decimal strings.
CREATE TABLE PricePolicy (
    BusinessUnitId TEXT    NOT NULL,
    ActionType     TEXT    NOT NULL,
    Formula        TEXT    NOT NULL CHECK (Formula IN ('FIXED', 'PER_UNIT', 'PERCENT')),
    Rate           TEXT    NOT NULL,
    Unit           TEXT    NOT NULL,
    TransferType   TEXT    NOT NULL,
    Currency       TEXT    NOT NULL,
    MinFee         INTEGER NOT NULL DEFAULT 0 CHECK (MinFee >= 0),
    MaxFee         INTEGER NOT NULL DEFAULT 0 CHECK (MaxFee >= 0),
    ConvertTo      TEXT    NULL,
    ConversionRate TEXT    NULL,
    Version        INTEGER NOT NULL,
    UpdatedOn      INTEGER NOT NULL,
    UpdatedBy      TEXT    NULL,
    PRIMARY KEY (BusinessUnitId, ActionType)
);

-- A command's price, frozen on its first claim: the first insert wins.
CREATE TABLE CommandPrice (
    CommandId      TEXT    NOT NULL PRIMARY KEY,
    BusinessUnitId TEXT    NOT NULL,
    CampaignId     TEXT    NOT NULL,
    ActionType     TEXT    NOT NULL,
    Amount         INTEGER NOT NULL CHECK (Amount >= 0),
    Currency       TEXT    NOT NULL,
    PriceJson      TEXT    NOT NULL,
    FrozenOn       INTEGER NOT NULL
);

-- The budget of one campaign. The CHECK is the invariant the conditional reserve keeps.
CREATE TABLE CampaignBudget (
    BusinessUnitId TEXT    NOT NULL,
    CampaignId     TEXT    NOT NULL,
    Currency       TEXT    NOT NULL,
    MaxCost        INTEGER NOT NULL,
    Cost           INTEGER NOT NULL DEFAULT 0,
    ReservedCost   INTEGER NOT NULL DEFAULT 0,
    Status         TEXT    NOT NULL CHECK (Status IN ('ACTIVE', 'PAUSED')),
    PausedReason   TEXT    NULL CHECK (PausedReason IN ('BUDGET', 'BALANCE')),
    Version        INTEGER NOT NULL,
    CreatedOn      INTEGER NOT NULL,
    UpdatedOn      INTEGER NOT NULL,
    PRIMARY KEY (BusinessUnitId, CampaignId),
    CHECK (Cost >= 0 AND ReservedCost >= 0 AND Cost + ReservedCost <= MaxCost)
);

-- One reservation per command: HELD → CONSUMED | RELEASED (RELEASED → HELD on a new attempt).
CREATE TABLE BudgetReservation (
    Id             INTEGER PRIMARY KEY AUTOINCREMENT,
    CommandId      TEXT    NOT NULL,
    BusinessUnitId TEXT    NOT NULL,
    CampaignId     TEXT    NOT NULL,
    Amount         INTEGER NOT NULL CHECK (Amount >= 0),
    Currency       TEXT    NOT NULL,
    Status         TEXT    NOT NULL CHECK (Status IN ('HELD', 'CONSUMED', 'RELEASED')),
    Attempt        INTEGER NOT NULL,
    OrderId        TEXT    NOT NULL,
    ActionStatus   TEXT    NULL,
    CreatedOn      INTEGER NOT NULL,
    UpdatedOn      INTEGER NOT NULL,
    CONSTRAINT UQ_BudgetReservation_Command UNIQUE (CommandId)
);
CREATE INDEX IX_BudgetReservation_Campaign ON BudgetReservation (BusinessUnitId, CampaignId, Status, CreatedOn);

-- One record per billing order; CostAdded marks the fee added to the budget's Cost (once).
CREATE TABLE FeeTransfer (
    Id                INTEGER PRIMARY KEY AUTOINCREMENT,
    OrderId           TEXT    NOT NULL,
    CommandId         TEXT    NOT NULL,
    ReservationId     INTEGER NOT NULL REFERENCES BudgetReservation (Id),
    Attempt           INTEGER NOT NULL,
    BusinessUnitId    TEXT    NOT NULL,
    CampaignId        TEXT    NOT NULL,
    Amount            INTEGER NOT NULL CHECK (Amount >= 0),
    Currency          TEXT    NOT NULL,
    TransferType      TEXT    NOT NULL,
    Day               TEXT    NOT NULL,
    Status            TEXT    NOT NULL CHECK (Status IN ('PENDING', 'SUCCEEDED', 'FAILED', 'UNKNOWN')),
    CostAdded         INTEGER NOT NULL DEFAULT 0,
    ProviderReference TEXT    NULL,
    LastError         TEXT    NULL,
    Checks            INTEGER NOT NULL DEFAULT 0,
    Revision          INTEGER NOT NULL,
    ResolvedBy        TEXT    NULL,
    ResolutionReason  TEXT    NULL,
    CreatedOn         INTEGER NOT NULL,
    UpdatedOn         INTEGER NOT NULL,
    CONSTRAINT UQ_FeeTransfer_Order UNIQUE (OrderId),
    CONSTRAINT UQ_FeeTransfer_Attempt UNIQUE (CommandId, Attempt)
);
CREATE INDEX IX_FeeTransfer_Status ON FeeTransfer (Status, Id);
CREATE INDEX IX_FeeTransfer_Campaign ON FeeTransfer (BusinessUnitId, CampaignId, Status);

-- Commands waiting for budget or balance (WAITING_BUDGET), removed when they reserve.
CREATE TABLE BudgetWait (
    CommandId      TEXT    NOT NULL PRIMARY KEY,
    BusinessUnitId TEXT    NOT NULL,
    CampaignId     TEXT    NOT NULL,
    Reason         TEXT    NOT NULL CHECK (Reason IN ('BUDGET', 'BALANCE')),
    Amount         INTEGER NOT NULL,
    Currency       TEXT    NOT NULL,
    Since          INTEGER NOT NULL
);
CREATE INDEX IX_BudgetWait_Unit ON BudgetWait (BusinessUnitId, Since);

-- The fee-fact projection: the highest revision seen per order.
CREATE TABLE CampaignFeeProjection (
    OrderId        TEXT    NOT NULL PRIMARY KEY,
    CommandId      TEXT    NOT NULL,
    BusinessUnitId TEXT    NOT NULL,
    CampaignId     TEXT    NOT NULL,
    Revision       INTEGER NOT NULL,
    FeeStatus      TEXT    NOT NULL,
    Amount         INTEGER NOT NULL,
    Currency       TEXT    NOT NULL,
    Day            TEXT    NOT NULL,
    UpdatedOn      INTEGER NOT NULL
);
CREATE INDEX IX_CampaignFeeProjection_Day ON CampaignFeeProjection (BusinessUnitId, CampaignId, Day);

-- Audited changes of budgets, price policies and fees.
CREATE TABLE BudgetAudit (
    Id             INTEGER PRIMARY KEY AUTOINCREMENT,
    BusinessUnitId TEXT    NOT NULL,
    CampaignId     TEXT    NOT NULL,
    Subject        TEXT    NOT NULL,
    Action         TEXT    NOT NULL,
    Operator       TEXT    NOT NULL,
    Reason         TEXT    NOT NULL,
    BeforeJson     TEXT    NOT NULL,
    AfterJson      TEXT    NOT NULL,
    CreatedOn      INTEGER NOT NULL
);
CREATE INDEX IX_BudgetAudit_Campaign ON BudgetAudit (BusinessUnitId, CampaignId, Id);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
