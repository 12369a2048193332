-- +goose Up
-- Console sessions kept server-side (shared/session, docs/security.md#sessions): a session
-- cookie opens the console only while its row is live, so logout ends it at once and a
-- replayed cookie is refused. The row holds the SHA-256 of the cookie, never the cookie.
-- Instants are INTEGER milliseconds since the Unix epoch, UTC.
CREATE TABLE ConsoleSession (
    SessionHash TEXT    NOT NULL PRIMARY KEY,  -- hex SHA-256 of the cookie value
    Principal   TEXT    NOT NULL,
    CreatedOn   INTEGER NOT NULL,
    LastSeenOn  INTEGER NOT NULL,              -- the idle timeout counts from here
    ExpiresOn   INTEGER NOT NULL,              -- the absolute lifetime's end
    EndedOn     INTEGER NULL,
    EndReason   TEXT    NULL                   -- logout, revoked
);
CREATE INDEX IX_ConsoleSession_ExpiresOn ON ConsoleSession (ExpiresOn);
CREATE INDEX IX_ConsoleSession_Principal ON ConsoleSession (Principal) WHERE EndedOn IS NULL;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
