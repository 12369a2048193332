-- +goose Up
-- A recipient is an e-mail address (at most 320 characters) or a webhook URL (at most 2000,
-- delivery/channel.ValidateWebhookURL): widen the column so a long URL fails its own
-- validation, never the completion transaction of every recipient of the row. Not indexed.
ALTER TABLE dbo.NotificationJob ALTER COLUMN Recipient nvarchar(2000) NOT NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
