-- +goose Up
-- The in-app inbox channel; the same table as sql/sqlite/migrations/0009_inbox.sql
-- (docs/inbox.md). Conventions: see 0001_initial.sql. Seq is assigned under UPDLOCK +
-- HOLDLOCK on the recipient's key range (InboxInsert), so two sends to one recipient commit
-- in Seq order and a reader that sees Seq n has every message before it.
CREATE TABLE dbo.InboxMessage (
    Id             bigint IDENTITY(1,1) NOT NULL CONSTRAINT PK_InboxMessage PRIMARY KEY NONCLUSTERED,
    BusinessUnitId nvarchar(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
    RecipientId    nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Seq            bigint        NOT NULL CONSTRAINT CK_InboxMessage_Seq CHECK (Seq > 0),
    DeliveryKey    nvarchar(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    Template       nvarchar(200) NOT NULL,
    Subject        nvarchar(max) NOT NULL,
    TextBody       nvarchar(max) NOT NULL,
    HtmlBody       nvarchar(max) NOT NULL,
    PayloadJson    nvarchar(max) NULL,
    CreatedOn      datetime2(3)  NOT NULL,
    ReadOn         datetime2(3)  NULL,
    Version        bigint        NOT NULL CONSTRAINT DF_InboxMessage_Version DEFAULT 1,
    CONSTRAINT UQ_InboxMessage_DeliveryKey UNIQUE (DeliveryKey),
    CONSTRAINT UQ_InboxMessage_Recipient UNIQUE CLUSTERED (BusinessUnitId, RecipientId, Seq)
);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
