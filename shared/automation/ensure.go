package automation

// EnsureAction is the outcome of ensuring one Candidate (docs/architecture.md#ensure, docs/seeds.md#seed-000
// "ensure semantics").
type EnsureAction string

// Ensure outcomes, one per row of the ensure table.
const (
	// EnsureInserted: no row existed; a Pending row was inserted.
	EnsureInserted EnsureAction = "Inserted"
	// EnsureRecordedMissed: no row existed and the candidate's window had passed; the row was
	// inserted as Deactivated with the candidate's MissedReason and will never be sent.
	EnsureRecordedMissed EnsureAction = "RecordedMissed"
	// EnsureUpdated: a Pending row with the same InputHash got a new schedule in place.
	EnsureUpdated EnsureAction = "Updated"
	// EnsureReactivated: a Failed/Deactivated/Cancelled row with the same InputHash became
	// Pending again; diagnostics, attempts and dispatch coordinates are kept. A row that
	// support cancelled (ReasonSupportCancelled) is the exception: it stays Cancelled
	// (EnsureUnchanged).
	EnsureReactivated EnsureAction = "Reactivated"
	// EnsureUnchanged: the row already says what the candidate says; nothing was written.
	EnsureUnchanged EnsureAction = "Unchanged"
	// EnsureAlreadyCompleted: the row is Completed; its coordinates are returned and it is
	// never sent again (a resend needs a new trigger key or a support-retry key).
	EnsureAlreadyCompleted EnsureAction = "AlreadyCompleted"
	// EnsureInProgress: the row is Processing; it is left alone.
	EnsureInProgress EnsureAction = "InProgress"
	// EnsureConflict: same key, different InputHash. The row is put on support hold, both
	// hashes are recorded (InputHash stays, ConflictInputHash gets the new one) and nothing
	// else is overwritten.
	EnsureConflict EnsureAction = "Conflict"
)

// DecideEnsure applies the ensure table to the existing row (nil when none) and a
// candidate with the same SchedulerKey. It is pure: every store dialect calls it inside
// its transaction and then performs the write it names, so the table lives in one place.
func DecideEnsure(existing *SchedulerRow, c Candidate) EnsureAction {
	if existing == nil {
		if c.MissedReason != "" {
			return EnsureRecordedMissed
		}
		return EnsureInserted
	}
	switch existing.Status {
	case StatusCompleted:
		return EnsureAlreadyCompleted
	case StatusProcessing:
		return EnsureInProgress
	}
	if existing.InputHash != c.InputHash {
		if existing.IsOnSupportHold && existing.ConflictInputHash == c.InputHash {
			return EnsureUnchanged // the same conflict seen again: already recorded
		}
		return EnsureConflict
	}
	if c.MissedReason != "" {
		// A missed occurrence never reactivates or reschedules an existing row: a Pending one
		// is judged by the poller's lateness rule, a Deactivated one stays so.
		return EnsureUnchanged
	}
	switch existing.Status {
	case StatusCancelled:
		if existing.ReasonCode == ReasonSupportCancelled {
			// An operator cancelled this very occurrence (same key, same input): a
			// redelivered, replayed or unrelated-field event must not undo that. A real
			// change of the occurrence arrives under another key (new rows) or another
			// InputHash (the conflict above).
			return EnsureUnchanged
		}
		return EnsureReactivated
	case StatusPending:
		if sameSchedule(existing, c) {
			return EnsureUnchanged
		}
		return EnsureUpdated
	default: // Failed, Deactivated, Cancelled
		return EnsureReactivated
	}
}

func sameSchedule(r *SchedulerRow, c Candidate) bool {
	return r.ScheduledOn.Equal(c.ScheduledOn) &&
		r.ScheduledLocalDate == c.ScheduledLocalDate &&
		r.ScheduledLocalTime == c.ScheduledLocalTime &&
		r.TimeZoneID == c.TimeZoneID
}
