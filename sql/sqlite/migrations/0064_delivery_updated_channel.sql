-- +goose Up
-- IX_NotificationJob_Updated also holds Channel (issue 35: the console's overview counts
-- deliveries by channel). SupportThroughput groups the window's finished deliveries by
-- minute, status and channel from this index alone (covering, as before: no table read per
-- delivery). The cost on the delivery path: none in writes, an entry is still written once,
-- when a job reaches Sent, Failed or Unknown (the index is partial since 0029); each entry
-- is longer by the channel name (a few bytes: "log", "sms", "email"). A trailing key column,
-- not a leading one: the range seek on UpdatedOn is unchanged.
DROP INDEX IX_NotificationJob_Updated;
CREATE INDEX IX_NotificationJob_Updated ON NotificationJob (UpdatedOn, Status, BusinessUnitId, Channel)
    WHERE Status IN ('Sent', 'Failed', 'Unknown');

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
