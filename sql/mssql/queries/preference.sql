-- Recipient preferences and quiet hours (SQL Server); the same names, parameters and columns
-- as sql/sqlite/queries/preference.sql (docs/channels.md#recipient-preferences).

-- name: PreferenceGet :one
-- UPDLOCK + HOLDLOCK on the key: two changes of one preference serialise here.
SELECT BusinessUnitId, RecipientId, Channel, Category, OptedIn, Source, ChangedBy, ChangedOn, Version
FROM dbo.RecipientPreference WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Channel = @Channel AND Category = @Category;

-- name: PreferenceCount :one
-- UPDLOCK + HOLDLOCK on the recipient's key range: the bound holds under concurrent inserts.
SELECT COUNT(*) FROM dbo.RecipientPreference WITH (UPDLOCK, HOLDLOCK, FORCESEEK)
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId;

-- name: PreferenceInsert :exec
INSERT INTO dbo.RecipientPreference (BusinessUnitId, RecipientId, Channel, Category, OptedIn, Source, ChangedBy, ChangedOn, Version)
VALUES (@BusinessUnitId, @RecipientId, @Channel, @Category, @OptedIn, @Source, @ChangedBy, @Now, 1);

-- name: PreferenceUpdate :exec
UPDATE dbo.RecipientPreference SET OptedIn = @OptedIn, Source = @Source, ChangedBy = @ChangedBy, ChangedOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Channel = @Channel AND Category = @Category;

-- name: PreferenceList :many
SELECT TOP (@Limit) BusinessUnitId, RecipientId, Channel, Category, OptedIn, Source, ChangedBy, ChangedOn, Version
FROM dbo.RecipientPreference WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId
ORDER BY Channel, Category;

-- name: QuietHoursGet :one
-- UPDLOCK + HOLDLOCK: QuietHoursPut reads then inserts or updates under this lock.
SELECT BusinessUnitId, RecipientId, StartLocal, EndLocal, TimeZoneId, ChangedBy, ChangedOn, Version
FROM dbo.QuietHours WITH (UPDLOCK, HOLDLOCK, FORCESEEK) WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId;

-- name: QuietHoursInsert :exec
INSERT INTO dbo.QuietHours (BusinessUnitId, RecipientId, StartLocal, EndLocal, TimeZoneId, ChangedBy, ChangedOn, Version)
VALUES (@BusinessUnitId, @RecipientId, @StartLocal, @EndLocal, @TimeZoneId, @ChangedBy, @Now, 1);

-- name: QuietHoursUpdate :exec
UPDATE dbo.QuietHours SET StartLocal = @StartLocal, EndLocal = @EndLocal, TimeZoneId = @TimeZoneId, ChangedBy = @ChangedBy,
    ChangedOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId;

-- name: QuietHoursDelete :exec
DELETE FROM dbo.QuietHours WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId;
