-- The in-app inbox (SQLite; docs/inbox.md). Columns of every read, in this order:
-- Id, BusinessUnitId, RecipientId, Seq, DeliveryKey, Template, Subject, TextBody, HtmlBody,
-- PayloadJson, CreatedOn, ReadOn, Version.

-- name: InboxInsert :exec
-- Stores the message unless its delivery key is stored (RowsAffected says which); Seq is the
-- recipient's highest + 1. Writers are serialised (BEGIN IMMEDIATE), so Seq order is commit order.
INSERT INTO InboxMessage (BusinessUnitId, RecipientId, Seq, DeliveryKey, Template, Subject, TextBody, HtmlBody,
                          PayloadJson, CreatedOn, ReadOn, Version)
SELECT @BusinessUnitId, @RecipientId,
       COALESCE((SELECT MAX(Seq) FROM InboxMessage WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId), 0) + 1,
       @DeliveryKey, @Template, @Subject, @TextBody, @HtmlBody, @PayloadJson, @CreatedOn, NULL, 1
WHERE NOT EXISTS (SELECT 1 FROM InboxMessage WHERE DeliveryKey = @DeliveryKey);

-- name: InboxGetByDeliveryKey :one
SELECT Id, BusinessUnitId, RecipientId, Seq, DeliveryKey, Template, Subject, TextBody, HtmlBody,
       PayloadJson, CreatedOn, ReadOn, Version
FROM InboxMessage WHERE DeliveryKey = @DeliveryKey;

-- name: InboxGet :one
SELECT Id, BusinessUnitId, RecipientId, Seq, DeliveryKey, Template, Subject, TextBody, HtmlBody,
       PayloadJson, CreatedOn, ReadOn, Version
FROM InboxMessage WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Seq = @Seq;

-- name: InboxList :many
-- Newest first below @BeforeSeq, through UQ_InboxMessage_Recipient.
SELECT Id, BusinessUnitId, RecipientId, Seq, DeliveryKey, Template, Subject, TextBody, HtmlBody,
       PayloadJson, CreatedOn, ReadOn, Version
FROM InboxMessage
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Seq < @BeforeSeq
  AND (@State = 'all' OR (@State = 'unread' AND ReadOn IS NULL) OR (@State = 'read' AND ReadOn IS NOT NULL))
ORDER BY Seq DESC LIMIT @Limit;

-- name: InboxListAfter :many
-- Oldest first above @AfterSeq (the stream's replay).
SELECT Id, BusinessUnitId, RecipientId, Seq, DeliveryKey, Template, Subject, TextBody, HtmlBody,
       PayloadJson, CreatedOn, ReadOn, Version
FROM InboxMessage
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Seq > @AfterSeq
ORDER BY Seq LIMIT @Limit;

-- name: InboxMarkRead :exec
-- Only an unread message at the caller's Version; RowsAffected 0 is sorted out in Go.
UPDATE InboxMessage SET ReadOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Seq = @Seq
  AND Version = @Version AND ReadOn IS NULL;
