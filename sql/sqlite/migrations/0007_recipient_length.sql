-- +goose Up
-- SQL Server widens NotificationJob.Recipient to 2000 characters here; SQLite TEXT has no
-- length, so this number only keeps the dialects' migrations in step.
SELECT 1;

-- +goose Down
SELECT 1;
