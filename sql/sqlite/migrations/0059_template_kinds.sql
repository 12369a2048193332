-- +goose Up
-- Template kinds and deletion (docs/channels.md#templates).
-- Kind: 'message' (subject, text, html: e-mail, webhook, and any channel's plain message),
-- 'push' (title in Subject, body in TextBody, data templates in Extra), 'sms' (TextBody only)
-- or 'whatsapp' (Extra holds the provider template's name, language and parameter
-- templates). Extra is the kind's JSON ('' for message and sms).
-- Deleted = 1 marks a tombstone: DELETE /api/templates/{key} stores one as the unit's next
-- version (with who deleted it and when), so the history stays and a version number is
-- never reused; while a unit's latest version is a tombstone its deliveries render the
-- default again.
ALTER TABLE NotificationTemplate ADD COLUMN Kind TEXT NOT NULL DEFAULT 'message'
    CHECK (Kind IN ('message', 'push', 'sms', 'whatsapp'));
ALTER TABLE NotificationTemplate ADD COLUMN Extra TEXT NOT NULL DEFAULT '';
ALTER TABLE NotificationTemplate ADD COLUMN Deleted INTEGER NOT NULL DEFAULT 0 CHECK (Deleted IN (0, 1));

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
