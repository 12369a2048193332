-- The in-app inbox (SQL Server); the same names, parameters and columns as
-- sql/sqlite/queries/inbox.sql (docs/inbox.md).

-- name: InboxInsert :exec
-- Stores the message unless its delivery key is stored (RowsAffected says which). UPDLOCK +
-- HOLDLOCK on the recipient's key range serialise two sends to one recipient, so Seq order
-- is commit order; the same on the delivery key serialises two sends of one delivery.
INSERT INTO dbo.InboxMessage (BusinessUnitId, RecipientId, Seq, DeliveryKey, Template, Subject, TextBody, HtmlBody,
                              PayloadJson, CreatedOn, ReadOn, Version)
SELECT @BusinessUnitId, @RecipientId,
       COALESCE((SELECT MAX(Seq) FROM dbo.InboxMessage WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
                 WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId), 0) + 1,
       @DeliveryKey, @Template, @Subject, @TextBody, @HtmlBody, @PayloadJson, @CreatedOn, NULL, 1
WHERE NOT EXISTS (SELECT 1 FROM dbo.InboxMessage WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE DeliveryKey = @DeliveryKey);

-- name: InboxGetByDeliveryKey :one
SELECT Id, BusinessUnitId, RecipientId, Seq, DeliveryKey, Template, Subject, TextBody, HtmlBody,
       PayloadJson, CreatedOn, ReadOn, Version
FROM dbo.InboxMessage WHERE DeliveryKey = @DeliveryKey;

-- name: InboxGet :one
SELECT Id, BusinessUnitId, RecipientId, Seq, DeliveryKey, Template, Subject, TextBody, HtmlBody,
       PayloadJson, CreatedOn, ReadOn, Version
FROM dbo.InboxMessage WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Seq = @Seq;

-- name: InboxList :many
SELECT TOP (@Limit) Id, BusinessUnitId, RecipientId, Seq, DeliveryKey, Template, Subject, TextBody, HtmlBody,
       PayloadJson, CreatedOn, ReadOn, Version
FROM dbo.InboxMessage
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Seq < @BeforeSeq
  AND (@State = N'all' OR (@State = N'unread' AND ReadOn IS NULL) OR (@State = N'read' AND ReadOn IS NOT NULL))
ORDER BY Seq DESC;

-- name: InboxListAfter :many
SELECT TOP (@Limit) Id, BusinessUnitId, RecipientId, Seq, DeliveryKey, Template, Subject, TextBody, HtmlBody,
       PayloadJson, CreatedOn, ReadOn, Version
FROM dbo.InboxMessage
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Seq > @AfterSeq
ORDER BY Seq;

-- name: InboxMarkRead :exec
UPDATE dbo.InboxMessage SET ReadOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Seq = @Seq
  AND Version = @Version AND ReadOn IS NULL;
