-- +goose Up
-- Budgets in the campaign worker (docs/budgets.md#in-the-worker). A command whose paid action
-- found too little budget or billing balance waits in a new, never-final status,
-- 'WAITING_BUDGET'. SQLite cannot change a CHECK constraint in place, so CampaignCommand is
-- rebuilt with the same columns, rows and indexes; nothing references it.
CREATE TABLE CampaignCommand_0016 (
    Id               INTEGER PRIMARY KEY AUTOINCREMENT,
    CommandId        TEXT    NOT NULL UNIQUE,
    EffectKey        TEXT    NOT NULL,
    ExecutionId      TEXT    NOT NULL,
    BusinessUnitId   TEXT    NOT NULL,
    CampaignId       TEXT    NOT NULL,
    RecipientId      TEXT    NOT NULL,
    ActionIndex      INTEGER NOT NULL,
    ActionKey        TEXT    NOT NULL,
    ActionType       TEXT    NOT NULL,
    Provider         TEXT    NOT NULL,
    LocalDate        TEXT    NOT NULL,
    ParamsJson       TEXT    NULL,
    Status           TEXT    NOT NULL CHECK (Status IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'UNKNOWN', 'CANCELLED', 'SKIPPED', 'WAITING_BUDGET')),
    LeaseExpiresOn   INTEGER NULL,
    AttemptCount     INTEGER NOT NULL DEFAULT 0,
    RetryCount       INTEGER NOT NULL DEFAULT 0,
    NextAttemptOn    INTEGER NULL,
    ProviderRef      TEXT    NULL,
    ResultJson       TEXT    NULL,
    LastError        TEXT    NULL,
    ResolvedBy       TEXT    NULL,
    ResolutionReason TEXT    NULL,
    Revision         INTEGER NOT NULL,
    Version          INTEGER NOT NULL,
    CreatedOn        INTEGER NOT NULL,
    UpdatedOn        INTEGER NOT NULL,
    CONSTRAINT UQ_CampaignCommand_Effect UNIQUE (BusinessUnitId, EffectKey),
    CONSTRAINT UQ_CampaignCommand_Step UNIQUE (ExecutionId, ActionIndex)
);
INSERT INTO CampaignCommand_0016 (Id, CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, ActionIndex, ActionKey, ActionType, Provider, LocalDate, ParamsJson, Status, LeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, ProviderRef, ResultJson, LastError, ResolvedBy, ResolutionReason, Revision, Version, CreatedOn, UpdatedOn)
SELECT Id, CommandId, EffectKey, ExecutionId, BusinessUnitId, CampaignId, RecipientId, ActionIndex, ActionKey, ActionType, Provider, LocalDate, ParamsJson, Status, LeaseExpiresOn, AttemptCount, RetryCount, NextAttemptOn, ProviderRef, ResultJson, LastError, ResolvedBy, ResolutionReason, Revision, Version, CreatedOn, UpdatedOn
FROM CampaignCommand;
DROP TABLE CampaignCommand;
ALTER TABLE CampaignCommand_0016 RENAME TO CampaignCommand;
CREATE INDEX IX_CampaignCommand_Due ON CampaignCommand (Status, NextAttemptOn);
CREATE INDEX IX_CampaignCommand_Lease ON CampaignCommand (Status, LeaseExpiresOn);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
