-- The console's template pages (docs/console.md#templates): what a business unit may send
-- and each version kept.

-- name: NotificationTemplateList :many
-- The latest version of every template key of the unit (its overrides) and of the platform
-- defaults (BusinessUnitId ''), by key after @AfterKey, the default before the override. A
-- scan of the primary key (TemplateKey, BusinessUnitId, Version): templates are few.
SELECT t.TemplateKey, t.BusinessUnitId, t.Version, t.Subject, t.TextBody, t.HtmlBody, t.CreatedBy, t.CreatedOn, t.Kind, t.Extra, t.Deleted
FROM NotificationTemplate t
WHERE t.BusinessUnitId IN ('', @BusinessUnitId) AND t.TemplateKey > @AfterKey
  AND t.Version = (SELECT MAX(m.Version) FROM NotificationTemplate m WHERE m.TemplateKey = t.TemplateKey AND m.BusinessUnitId = t.BusinessUnitId)
ORDER BY t.TemplateKey, t.BusinessUnitId
LIMIT @Limit;

-- name: NotificationTemplateVersions :many
-- One key's versions for one unit ('' = the default), newest first: a seek of the primary key.
SELECT TemplateKey, BusinessUnitId, Version, Subject, TextBody, HtmlBody, CreatedBy, CreatedOn, Kind, Extra, Deleted
FROM NotificationTemplate
WHERE TemplateKey = @TemplateKey AND BusinessUnitId = @BusinessUnitId
ORDER BY Version DESC
LIMIT @Limit;
