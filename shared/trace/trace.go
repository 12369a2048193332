package trace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Outcome is what one attempt ended with.
type Outcome string

// Attempt outcomes.
const (
	OutcomeCompleted   Outcome = "Completed"   // delivery queued
	OutcomeDeactivated Outcome = "Deactivated" // revalidation said no (an outcome, not a failure)
	OutcomeRetrying    Outcome = "Retrying"    // failed; NextRetryOn set
	OutcomeHeld        Outcome = "Held"        // failed; on support hold
	OutcomeLeaseLost   Outcome = "LeaseLost"   // another worker owns the row now; nothing written
	// OutcomeDeadLettered: a message that can never succeed was recorded and acknowledged
	// (SchedulerKey "deadletter:{function}:{messageId}", no scheduler row).
	OutcomeDeadLettered Outcome = "DeadLettered"
)

// JobRecord is one AutomationJob trace row: one attempt on one scheduler row. Instants UTC.
type JobRecord struct {
	SchedulerKey   string    `json:"schedulerKey"`
	RowGuid        string    `json:"rowGuid"`
	RowID          int64     `json:"rowId"`
	BusinessUnitID string    `json:"businessUnitId"`
	AutomationType string    `json:"automationType"`
	Attempt        int       `json:"attempt"` // 1-based: RetryCount+1 at claim time
	Version        int64     `json:"version"` // the claim token
	Outcome        Outcome   `json:"outcome"`
	ReasonCode     string    `json:"reasonCode,omitempty"`
	ErrorCode      string    `json:"errorCode,omitempty"`
	Message        string    `json:"message,omitempty"` // short; no personal data
	StartedOn      time.Time `json:"startedOn"`
	FinishedOn     time.Time `json:"finishedOn"`
	TraceBlobName  string    `json:"traceBlobName,omitempty"` // "" when no diagnostics blob was written
}

// Writer stores trace rows and diagnostics blobs.
type Writer interface {
	// WriteJob stores one trace row. Writing the same (RowGuid, Attempt, Version) twice
	// overwrites (idempotent under retries). A RowGuid always comes with the same
	// SchedulerKey: a scheduler row's Guid is derived from its key (store.RowGuid), a
	// dead-letter record's RowGuid and key both from its function and message id. A store
	// may key rows by (SchedulerKey, RowGuid, Attempt, Version) (the local store does), so a
	// rewrite under another SchedulerKey is a second row there.
	WriteJob(ctx context.Context, r JobRecord) error
	// PutBlob stores a diagnostics blob under name (overwrites).
	PutBlob(ctx context.Context, name string, data []byte) error
}

// BatchWriter is implemented by writers that store many rows at once more cheaply than
// one by one (one transaction, one table batch). Callers use it when available.
type BatchWriter interface {
	// WriteJobs stores the rows with the same semantics as WriteJob for each.
	WriteJobs(ctx context.Context, rs []JobRecord) error
}

// WriteJobs stores rs through w, in one batch when w implements BatchWriter.
func WriteJobs(ctx context.Context, w Writer, rs []JobRecord) error {
	if bw, ok := w.(BatchWriter); ok {
		return bw.WriteJobs(ctx, rs)
	}
	for _, r := range rs {
		if err := w.WriteJob(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// Reader queries what Writer stored.
type Reader interface {
	// JobsByKey returns every trace row of one SchedulerKey, oldest first.
	JobsByKey(ctx context.Context, schedulerKey string) ([]JobRecord, error)
	// JobsByBusinessUnitDay returns the trace rows of one business unit whose StartedOn is on
	// the given UTC day ("YYYY-MM-DD"), oldest first, at most limit.
	JobsByBusinessUnitDay(ctx context.Context, businessUnitID, utcDay string, limit int) ([]JobRecord, error)
	// GetBlob returns a diagnostics blob, or ErrBlobNotFound.
	GetBlob(ctx context.Context, name string) ([]byte, error)
}

// Store is both sides.
type Store interface {
	Writer
	Reader
}

// ErrBlobNotFound is returned by GetBlob for an unknown name.
var ErrBlobNotFound = fmt.Errorf("trace: blob not found")

// DeadLetterBlobName is where the record of a message that could not be processed lives:
// "deadletter/{scope}/{readable id}-{8 hex of sha256(scope, id)}.json". Every segment keeps
// only letters, digits, '-', '_' and '.' (others become '_', at most 120 characters); the
// hash keeps ids that sanitize alike ("a/b", "a_b") or are cut apart, while a redelivery of
// the same message overwrites its own record. scope may hold '/' (e.g. "bus/due-work").
func DeadLetterBlobName(scope, id string) string {
	sum := sha256.Sum256([]byte(scope + "\x00" + id))
	parts := strings.Split(scope, "/")
	for i, p := range parts {
		parts[i] = SafeSegment(p)
	}
	return fmt.Sprintf("deadletter/%s/%s-%s.json", strings.Join(parts, "/"), SafeSegment(id), hex.EncodeToString(sum[:4]))
}

// SafeSegment turns s into one blob-name segment valid for every trace store: letters,
// digits, '-', '_' and '.' kept, anything else '_', at most 120 characters; "", "." and ".."
// become "unnamed".
func SafeSegment(s string) string {
	out := make([]byte, 0, min(len(s), 120))
	for i := 0; i < len(s) && len(out) < 120; i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			out = append(out, c)
		} else {
			out = append(out, '_')
		}
	}
	if len(out) == 0 || string(out) == "." || string(out) == ".." {
		return "unnamed"
	}
	return string(out)
}

// BlobName returns the diagnostics blob name for one attempt:
// "scheduler/{rowGuid}/{attempt:03d}-v{version}.json". Names are stable so a retried write
// overwrites instead of multiplying.
func BlobName(rowGuid string, attempt int, version int64) string {
	return fmt.Sprintf("scheduler/%s/%03d-v%d.json", rowGuid, attempt, version)
}
