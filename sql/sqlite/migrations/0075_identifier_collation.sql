-- +goose Up
-- SQL Server's migration 0075 gives the identifiers it compared without case (the gateway
-- events' BusinessUnitId and CustomerId, AutomationScheduler.FailureReasonCode,
-- ConsoleSession.Principal, IdempotencyKey.RequestHash,
-- Outbox.Destination, SessionId and ClaimToken, OutboxLease.SkipDestinations) the binary
-- collation (sql/mssql/migrations/0075_identifier_collation.sql). SQLite compares TEXT with
-- BINARY unless a column says otherwise, and none of these does: nothing changes here, and
-- this file keeps the two dialects' migration numbers in step.
SELECT 1;

-- +goose Down
-- Forward-only: migrations are never rolled back in production.
SELECT 1;
