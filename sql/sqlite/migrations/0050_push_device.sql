-- +goose Up
-- The push channel's device registry (docs/channels.md#device-registry): one row per FCM
-- registration token of one customer in one business unit. TokenHash is the lower-case hex
-- SHA-256 of Token (the key; SQL Server cannot index a 4,000-character token). A retired
-- row keeps its token with RetiredOn and the provider's answer (RetiredReason), so support
-- sees why a device stopped getting pushes; registering the token again re-activates it.
-- Instants are INTEGER milliseconds since the Unix epoch, UTC.
CREATE TABLE PushDevice (
    BusinessUnitId TEXT    NOT NULL,
    CustomerId     TEXT    NOT NULL,
    TokenHash      TEXT    NOT NULL,
    Token          TEXT    NOT NULL,
    Platform       TEXT    NOT NULL CHECK (Platform IN ('android', 'ios', 'web')),
    App            TEXT    NOT NULL,
    RegisteredOn   INTEGER NOT NULL,
    UpdatedOn      INTEGER NOT NULL,
    RetiredOn      INTEGER NULL,
    RetiredReason  TEXT    NOT NULL DEFAULT '',
    Version        INTEGER NOT NULL DEFAULT 1,
    CONSTRAINT PK_PushDevice PRIMARY KEY (BusinessUnitId, CustomerId, TokenHash)
);
-- A token moved to another customer of the unit is found by its hash.
CREATE INDEX IX_PushDevice_Token ON PushDevice (BusinessUnitId, TokenHash);

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
