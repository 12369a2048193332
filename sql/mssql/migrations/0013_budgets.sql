-- +goose Up
-- Budgets and fees; the same tables as sql/sqlite/migrations/0013_budgets.sql (docs/budgets.md).
-- Conventions: see 0001_initial.sql. Amounts are bigint minor units of the row's ISO 4217
-- Currency; Rate and ConversionRate are exact decimal strings.

CREATE TABLE dbo.PricePolicy (
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ActionType     nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Formula        nvarchar(20)  NOT NULL CONSTRAINT CK_PricePolicy_Formula CHECK (Formula IN (N'FIXED', N'PER_UNIT', N'PERCENT')),
    Rate           nvarchar(32)  NOT NULL,
    Unit           nvarchar(50)  NOT NULL,
    TransferType   nvarchar(100) NOT NULL,
    Currency       nchar(3)      COLLATE Latin1_General_100_BIN2 NOT NULL,
    MinFee         bigint        NOT NULL CONSTRAINT DF_PricePolicy_MinFee DEFAULT 0 CONSTRAINT CK_PricePolicy_MinFee CHECK (MinFee >= 0),
    MaxFee         bigint        NOT NULL CONSTRAINT DF_PricePolicy_MaxFee DEFAULT 0 CONSTRAINT CK_PricePolicy_MaxFee CHECK (MaxFee >= 0),
    ConvertTo      nchar(3)      COLLATE Latin1_General_100_BIN2 NULL,
    ConversionRate nvarchar(32)  NULL,
    Version        bigint        NOT NULL,
    UpdatedOn      datetime2(3)  NOT NULL,
    UpdatedBy      nvarchar(200) NULL,
    CONSTRAINT PK_PricePolicy PRIMARY KEY CLUSTERED (BusinessUnitId, ActionType)
);

CREATE TABLE dbo.CommandPrice (
    CommandId      nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_CommandPrice PRIMARY KEY CLUSTERED,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId     nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ActionType     nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Amount         bigint        NOT NULL CONSTRAINT CK_CommandPrice_Amount CHECK (Amount >= 0),
    Currency       nchar(3)      COLLATE Latin1_General_100_BIN2 NOT NULL,
    PriceJson      nvarchar(max) NOT NULL,
    FrozenOn       datetime2(3)  NOT NULL
);

CREATE TABLE dbo.CampaignBudget (
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId     nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Currency       nchar(3)      COLLATE Latin1_General_100_BIN2 NOT NULL,
    MaxCost        bigint        NOT NULL,
    Cost           bigint        NOT NULL CONSTRAINT DF_CampaignBudget_Cost DEFAULT 0,
    ReservedCost   bigint        NOT NULL CONSTRAINT DF_CampaignBudget_ReservedCost DEFAULT 0,
    Status         nvarchar(10)  NOT NULL CONSTRAINT CK_CampaignBudget_Status CHECK (Status IN (N'ACTIVE', N'PAUSED')),
    PausedReason   nvarchar(10)  NULL CONSTRAINT CK_CampaignBudget_PausedReason CHECK (PausedReason IN (N'BUDGET', N'BALANCE')),
    Version        bigint        NOT NULL,
    CreatedOn      datetime2(3)  NOT NULL,
    UpdatedOn      datetime2(3)  NOT NULL,
    CONSTRAINT PK_CampaignBudget PRIMARY KEY CLUSTERED (BusinessUnitId, CampaignId),
    CONSTRAINT CK_CampaignBudget_Amounts CHECK (Cost >= 0 AND ReservedCost >= 0 AND Cost + ReservedCost <= MaxCost)
);

CREATE TABLE dbo.BudgetReservation (
    Id             bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_BudgetReservation PRIMARY KEY CLUSTERED,
    CommandId      nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId     nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Amount         bigint        NOT NULL CONSTRAINT CK_BudgetReservation_Amount CHECK (Amount >= 0),
    Currency       nchar(3)      COLLATE Latin1_General_100_BIN2 NOT NULL,
    Status         nvarchar(10)  NOT NULL CONSTRAINT CK_BudgetReservation_Status CHECK (Status IN (N'HELD', N'CONSUMED', N'RELEASED')),
    Attempt        bigint        NOT NULL,
    OrderId        nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ActionStatus   nvarchar(20)  NULL,
    CreatedOn      datetime2(3)  NOT NULL,
    UpdatedOn      datetime2(3)  NOT NULL,
    CONSTRAINT UQ_BudgetReservation_Command UNIQUE (CommandId)
);
CREATE INDEX IX_BudgetReservation_Campaign ON dbo.BudgetReservation (BusinessUnitId, CampaignId, Status, CreatedOn);

CREATE TABLE dbo.FeeTransfer (
    Id                bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_FeeTransfer PRIMARY KEY CLUSTERED,
    OrderId           nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CommandId         nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    ReservationId     bigint        NOT NULL CONSTRAINT FK_FeeTransfer_Reservation REFERENCES dbo.BudgetReservation (Id),
    Attempt           bigint        NOT NULL,
    BusinessUnitId    nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId        nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Amount            bigint        NOT NULL CONSTRAINT CK_FeeTransfer_Amount CHECK (Amount >= 0),
    Currency          nchar(3)      COLLATE Latin1_General_100_BIN2 NOT NULL,
    TransferType      nvarchar(100) NOT NULL,
    Day               nchar(10)     COLLATE Latin1_General_100_BIN2 NOT NULL,
    Status            nvarchar(10)  NOT NULL CONSTRAINT CK_FeeTransfer_Status CHECK (Status IN (N'PENDING', N'SUCCEEDED', N'FAILED', N'UNKNOWN')),
    CostAdded         bit           NOT NULL CONSTRAINT DF_FeeTransfer_CostAdded DEFAULT 0,
    ProviderReference nvarchar(400) NULL,
    LastError         nvarchar(2000) NULL,
    Checks            bigint        NOT NULL CONSTRAINT DF_FeeTransfer_Checks DEFAULT 0,
    Revision          bigint        NOT NULL,
    ResolvedBy        nvarchar(200) NULL,
    ResolutionReason  nvarchar(2000) NULL,
    CreatedOn         datetime2(3)  NOT NULL,
    UpdatedOn         datetime2(3)  NOT NULL,
    CONSTRAINT UQ_FeeTransfer_Order UNIQUE (OrderId),
    CONSTRAINT UQ_FeeTransfer_Attempt UNIQUE (CommandId, Attempt)
);
CREATE INDEX IX_FeeTransfer_Status ON dbo.FeeTransfer (Status, Id);
CREATE INDEX IX_FeeTransfer_Campaign ON dbo.FeeTransfer (BusinessUnitId, CampaignId, Status);

CREATE TABLE dbo.BudgetWait (
    CommandId      nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_BudgetWait PRIMARY KEY CLUSTERED,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId     nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Reason         nvarchar(10)  NOT NULL CONSTRAINT CK_BudgetWait_Reason CHECK (Reason IN (N'BUDGET', N'BALANCE')),
    Amount         bigint        NOT NULL,
    Currency       nchar(3)      COLLATE Latin1_General_100_BIN2 NOT NULL,
    Since          datetime2(3)  NOT NULL
);
CREATE INDEX IX_BudgetWait_Unit ON dbo.BudgetWait (BusinessUnitId, Since);

CREATE TABLE dbo.CampaignFeeProjection (
    OrderId        nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT PK_CampaignFeeProjection PRIMARY KEY CLUSTERED,
    CommandId      nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId     nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Revision       bigint        NOT NULL,
    FeeStatus      nvarchar(10)  NOT NULL,
    Amount         bigint        NOT NULL,
    Currency       nchar(3)      COLLATE Latin1_General_100_BIN2 NOT NULL,
    Day            nchar(10)     COLLATE Latin1_General_100_BIN2 NOT NULL,
    UpdatedOn      datetime2(3)  NOT NULL
);
CREATE INDEX IX_CampaignFeeProjection_Day ON dbo.CampaignFeeProjection (BusinessUnitId, CampaignId, Day);

CREATE TABLE dbo.BudgetAudit (
    Id             bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_BudgetAudit PRIMARY KEY CLUSTERED,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    CampaignId     nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Subject        nvarchar(300) NOT NULL,
    Action         nvarchar(30)  NOT NULL,
    Operator       nvarchar(200) NOT NULL,
    Reason         nvarchar(2000) NOT NULL,
    BeforeJson     nvarchar(max) NOT NULL,
    AfterJson      nvarchar(max) NOT NULL,
    CreatedOn      datetime2(3)  NOT NULL
);
CREATE INDEX IX_BudgetAudit_Campaign ON dbo.BudgetAudit (BusinessUnitId, CampaignId, Id);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
