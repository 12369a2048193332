package automation

import "fmt"

// ReminderOverdueKey builds the key of the immediate notification for a source first seen
// after its target date had passed (the immediate-notification provider, docs/architecture.md#event-flow):
//
//	reminder:{settingGuid}:{sourceType}:{sourceGuid}:{triggerKey}:{targetDate}:overdue
//
// It shares the prefix of ReminderDateKey (the last component is "overdue" instead of an
// offset), so one target date has at most one immediate notification per source. Same
// component rules and errors as ReminderDateKey.
func ReminderOverdueKey(settingGuid, sourceType, sourceGuid, triggerKey, targetDate string) (string, error) {
	g, err := canonGUID("settingGuid", settingGuid)
	if err != nil {
		return "", err
	}
	if !dateRE.MatchString(targetDate) {
		return "", fmt.Errorf("scheduler key: targetDate %q is not YYYY-MM-DD", targetDate)
	}
	parts, err := components(map[string]string{"sourceType": sourceType, "sourceGuid": sourceGuid, "triggerKey": triggerKey},
		"sourceType", "sourceGuid", "triggerKey")
	if err != nil {
		return "", err
	}
	return ShortenKey("reminder:" + g + ":" + parts + ":" + targetDate + ":overdue"), nil
}
