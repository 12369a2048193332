-- +goose Up
-- What a console session was signed in with (docs/security.md#sessions), so that every
-- request re-checks it: the API key's prefix (a revoked or rotated-out key ends the session
-- at its next request), or the person's identity-provider claims (the role and units claims
-- and the groups, as JSON), mapped again on every request with the current configuration.
-- NULL for the bootstrap token's sessions and for rows older than this migration.
ALTER TABLE ConsoleSession ADD COLUMN KeyPrefix TEXT NULL;
ALTER TABLE ConsoleSession ADD COLUMN Claims    TEXT NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
