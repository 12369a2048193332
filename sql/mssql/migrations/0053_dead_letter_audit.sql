-- +goose Up
-- The operators' actions on dead letters; the same table as
-- sql/sqlite/migrations/0053_dead_letter_audit.sql (docs/operations.md#dead-letters).
-- Conventions: see 0001_initial.sql. ETag is a 64-character hex hash (the key).
CREATE TABLE dbo.DeadLetterAudit (
    ETag           nvarchar(64)   COLLATE Latin1_General_100_BIN2 NOT NULL,
    Action         nvarchar(20)   NOT NULL CONSTRAINT CK_DeadLetterAudit_Action CHECK (Action IN (N'Requeue', N'Discard')),
    DeadLetterId   nvarchar(450)  NOT NULL,
    Destination    nvarchar(260)  NOT NULL,
    MessageId      nvarchar(400)  NOT NULL,
    BusinessUnitId nvarchar(100)  COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT DF_DeadLetterAudit_BusinessUnitId DEFAULT N'',
    Operator       nvarchar(200)  NOT NULL,
    Reason         nvarchar(1000) NOT NULL,
    BatchId        nvarchar(100)  NOT NULL CONSTRAINT DF_DeadLetterAudit_BatchId DEFAULT N'',
    ActedOn        datetime2(3)   NOT NULL,
    CONSTRAINT PK_DeadLetterAudit PRIMARY KEY CLUSTERED (ETag)
);
CREATE INDEX IX_DeadLetterAudit_ActedOn ON dbo.DeadLetterAudit (ActedOn, Action);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
