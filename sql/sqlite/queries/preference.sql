-- Recipient preferences and quiet hours (SQLite; docs/channels.md#recipient-preferences).
-- Preference reads return, in this order: BusinessUnitId, RecipientId, Channel, Category,
-- OptedIn, Source, ChangedBy, ChangedOn, Version. Quiet-hours reads: BusinessUnitId,
-- RecipientId, StartLocal, EndLocal, TimeZoneId, ChangedBy, ChangedOn, Version.

-- name: PreferenceGet :one
-- One row (writers are serialised by BEGIN IMMEDIATE).
SELECT BusinessUnitId, RecipientId, Channel, Category, OptedIn, Source, ChangedBy, ChangedOn, Version
FROM RecipientPreference
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Channel = @Channel AND Category = @Category;

-- name: PreferenceCount :one
SELECT COUNT(*) FROM RecipientPreference WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId;

-- name: PreferenceInsert :exec
INSERT INTO RecipientPreference (BusinessUnitId, RecipientId, Channel, Category, OptedIn, Source, ChangedBy, ChangedOn, Version)
VALUES (@BusinessUnitId, @RecipientId, @Channel, @Category, @OptedIn, @Source, @ChangedBy, @Now, 1);

-- name: PreferenceUpdate :exec
UPDATE RecipientPreference SET OptedIn = @OptedIn, Source = @Source, ChangedBy = @ChangedBy, ChangedOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId AND Channel = @Channel AND Category = @Category;

-- name: PreferenceList :many
SELECT BusinessUnitId, RecipientId, Channel, Category, OptedIn, Source, ChangedBy, ChangedOn, Version
FROM RecipientPreference WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId
ORDER BY Channel, Category LIMIT @Limit;

-- name: QuietHoursGet :one
SELECT BusinessUnitId, RecipientId, StartLocal, EndLocal, TimeZoneId, ChangedBy, ChangedOn, Version
FROM QuietHours WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId;

-- name: QuietHoursInsert :exec
INSERT INTO QuietHours (BusinessUnitId, RecipientId, StartLocal, EndLocal, TimeZoneId, ChangedBy, ChangedOn, Version)
VALUES (@BusinessUnitId, @RecipientId, @StartLocal, @EndLocal, @TimeZoneId, @ChangedBy, @Now, 1);

-- name: QuietHoursUpdate :exec
UPDATE QuietHours SET StartLocal = @StartLocal, EndLocal = @EndLocal, TimeZoneId = @TimeZoneId, ChangedBy = @ChangedBy,
    ChangedOn = @Now, Version = Version + 1
WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId;

-- name: QuietHoursDelete :exec
DELETE FROM QuietHours WHERE BusinessUnitId = @BusinessUnitId AND RecipientId = @RecipientId;
