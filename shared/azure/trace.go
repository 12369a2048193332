package azure

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/automation-platform/automation/shared/trace"
)

// Defaults of TraceOptions.
const (
	DefaultTraceTable     = "AutomationJob"
	DefaultTraceContainer = "automation-diagnostics"
)

// MaxJobsPerDay is the largest limit JobsByBusinessUnitDay accepts (the same bound as
// the local store, so callers see one contract).
const MaxJobsPerDay = 1000

// azuriteAccountKey is the published key of Azurite's development account
// devstoreaccount1. It is a constant of the emulator, not a secret.
const azuriteAccountKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

// DevelopmentConnectionString returns the connection string of an Azurite instance on
// 127.0.0.1 with the given blob, queue and table ports (scripts/azurite.sh prints the same
// string).
//
// It spells the development account out instead of using "UseDevelopmentStorage=true":
// the Go SDKs do not understand that shorthand (aztables and azblob both need AccountName
// and an endpoint per service, and reject or misroute the shorthand), and the shorthand
// fixes the ports to 10000-10002, whereas ours can move (AZURITE_*_PORT) so that several
// checkouts or CI jobs can each run their own Azurite.
func DevelopmentConnectionString(blobPort, queuePort, tablePort int) string {
	return "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + azuriteAccountKey +
		";BlobEndpoint=http://127.0.0.1:" + strconv.Itoa(blobPort) + "/devstoreaccount1" +
		";QueueEndpoint=http://127.0.0.1:" + strconv.Itoa(queuePort) + "/devstoreaccount1" +
		";TableEndpoint=http://127.0.0.1:" + strconv.Itoa(tablePort) + "/devstoreaccount1;"
}

// TraceOptions configure NewTraceStore. Give either ConnectionString (Azurite, or a
// shared-key/SAS account in development) or TableServiceURL, BlobServiceURL and Credential
// (Azure: managed identity, see NewCredential), not both.
type TraceOptions struct {
	// ConnectionString is a storage connection string with explicit endpoints, such as
	// DevelopmentConnectionString's. "UseDevelopmentStorage=true" is rejected: the Go SDKs
	// cannot parse it.
	ConnectionString string

	// TableServiceURL ("https://{account}.table.core.windows.net/") and BlobServiceURL
	// ("https://{account}.blob.core.windows.net/") are used with Credential.
	TableServiceURL, BlobServiceURL string
	Credential                      azcore.TokenCredential

	// Table is the trace table (default DefaultTraceTable); Container holds diagnostics
	// blobs (default DefaultTraceContainer). Both are created when missing.
	Table, Container string
}

// TraceStore is trace.Store on Azure Table Storage (trace rows) and Blob Storage
// (diagnostics blobs). It is safe for concurrent use.
//
// # Table design
//
// The table is never scanned: each of the two queries of trace.Reader reads one partition,
// in RowKey order. So every attempt is written as two entities with the same properties,
// one per query, plus a small identity entity:
//
//	query / purpose                  PartitionKey                          RowKey
//	JobsByKey                        key_{sha256(SchedulerKey)[:32 hex]}   {StartedOn}_{RowGuid}_{attempt:03d}_v{version:019d}
//	JobsByBusinessUnitDay            bu_{BusinessUnitID}_{yyyyMMdd}        {StartedOn}_{RowGuid}_{attempt:03d}_v{version:019d}
//	rewrite bookkeeping (identity)   row_{RowGuid}                         {attempt:03d}_v{version:019d}
//
// Why these keys:
//   - {StartedOn} is the UTC start at millisecond precision, "20060102T150405.000Z": fixed
//     width, so RowKey order is oldest first and JobsByBusinessUnitDay can stop after limit
//     rows ($top plus continuation) instead of sorting a whole day.
//   - SchedulerKeys are long and contain ':' and source ids, so their partition is always a
//     128-bit hash. {BusinessUnitID} and {RowGuid} are used verbatim when they are 1-128
//     ASCII letters, digits, '-' or '.', and are "~" + a 128-bit hash otherwise: keys never
//     contain / \ # ? ' % or control characters. The real values are properties, and every
//     query also filters on them (SchedulerKey eq …, BusinessUnitId eq …), so a hash
//     collision could not mix two keys' rows.
//   - {yyyyMMdd} is the UTC day of StartedOn, so one business unit's day is one partition:
//     the unit support asks for, and small enough never to need a scan.
//   - The (RowGuid, Attempt, Version) suffix makes a RowKey unique in any partition, and
//     writes are upserts (insert-or-replace), so a retried WriteJob overwrites.
//   - The identity entity records where the two index entities of one (RowGuid, Attempt,
//     Version) were written. A rewrite that changes StartedOn, SchedulerKey or
//     BusinessUnitID (which move the index entities) deletes the old ones, so the table
//     keeps the contract "same (RowGuid, Attempt, Version) overwrites" even for a writer
//     that changed the key (every writer derives a RowGuid from one SchedulerKey, and the
//     local store relies on that: trace.Writer). It is written last, with optimistic
//     concurrency (ETag), and retries converge: a crash leaves at most a stale index
//     entity that the next write of the same attempt removes. It also finds every attempt
//     of one row with one partition read, should support need that.
//
// Entity group transactions cannot span partitions, so WriteJob (one entity per partition)
// sends plain upserts, the two in parallel. WriteJobs (trace.BatchWriter, what the poller
// uses) groups a batch's index entities by partition and sends one transaction per
// partition: the rows of one poll mostly share their business-unit day partitions.
//
// Properties: SchedulerKey, RowGuid, RowId (Int64), BusinessUnitId, AutomationType, Attempt
// (Int64), Version (Int64), Outcome, ReasonCode, ErrorCode, Message, StartedOn (DateTime),
// FinishedOn (DateTime, absent when zero), UtcDay ("YYYY-MM-DD", for people browsing the
// table) and TraceBlobName. Instants must lie in Table Storage's DateTime range
// (1601-01-01 to 9999-12-31 UTC).
//
// # Blobs
//
// A diagnostics blob is one block blob, written with a single Put Blob (atomic: concurrent
// writers of one name never produce a mix). Names are validated as the local store does
// (no empty, "." or ".." segments, no leading or trailing '/', no "//"), and additionally
// no segment may end with '.', no '\' or control characters, at most 1024 bytes, which
// Blob Storage would silently alter or reject. Use a storage account without hierarchical
// namespace: there a "directory" is not a blob, as the contract expects.
type TraceStore struct {
	tables    *aztables.ServiceClient
	table     *aztables.Client
	tableName string
	container *container.Client
}

var _ trace.Store = (*TraceStore)(nil)

// NewTraceStore connects to the storage account and creates the table and the container
// when they are missing.
func NewTraceStore(ctx context.Context, opts TraceOptions) (*TraceStore, error) {
	if opts.Table == "" {
		opts.Table = DefaultTraceTable
	}
	if opts.Container == "" {
		opts.Container = DefaultTraceContainer
	}
	if err := validTableName(opts.Table); err != nil {
		return nil, err
	}
	if err := validContainerName(opts.Container); err != nil {
		return nil, err
	}

	var (
		tables *aztables.ServiceClient
		blobs  *azblob.Client
		err    error
	)
	byURL := opts.TableServiceURL != "" || opts.BlobServiceURL != "" || opts.Credential != nil
	switch {
	case opts.ConnectionString != "" && byURL:
		return nil, errors.New("azure trace: set either ConnectionString or TableServiceURL, BlobServiceURL and Credential, not both")
	case opts.ConnectionString != "":
		if strings.Contains(strings.ToLower(opts.ConnectionString), "usedevelopmentstorage") {
			return nil, errors.New("azure trace: UseDevelopmentStorage=true is not understood by the Go SDKs; use the explicit devstoreaccount1 connection string (DevelopmentConnectionString, or what scripts/azurite.sh start prints)")
		}
		if tables, err = aztables.NewServiceClientFromConnectionString(opts.ConnectionString, nil); err != nil {
			return nil, fmt.Errorf("azure trace: table connection string: %w", err)
		}
		if blobs, err = azblob.NewClientFromConnectionString(opts.ConnectionString, nil); err != nil {
			return nil, fmt.Errorf("azure trace: blob connection string: %w", err)
		}
	case byURL:
		if opts.TableServiceURL == "" || opts.BlobServiceURL == "" || opts.Credential == nil {
			return nil, errors.New("azure trace: TableServiceURL, BlobServiceURL and Credential are all required without a ConnectionString")
		}
		if tables, err = aztables.NewServiceClient(opts.TableServiceURL, opts.Credential, nil); err != nil {
			return nil, fmt.Errorf("azure trace: table service: %w", err)
		}
		if blobs, err = azblob.NewClient(opts.BlobServiceURL, opts.Credential, nil); err != nil {
			return nil, fmt.Errorf("azure trace: blob service: %w", err)
		}
	default:
		return nil, errors.New("azure trace: no storage account: set ConnectionString, or TableServiceURL, BlobServiceURL and Credential")
	}

	if _, err := tables.CreateTable(ctx, opts.Table, nil); err != nil && !hasTableCode(err, aztables.TableAlreadyExists) {
		return nil, fmt.Errorf("azure trace: create table %s: %w", opts.Table, err)
	}
	if _, err := blobs.CreateContainer(ctx, opts.Container, nil); err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		return nil, fmt.Errorf("azure trace: create container %s: %w", opts.Container, err)
	}
	return &TraceStore{
		tables:    tables,
		table:     tables.NewClient(opts.Table),
		tableName: opts.Table,
		container: blobs.ServiceClient().NewContainerClient(opts.Container),
	}, nil
}

// validTableName checks Table Storage's rule ^[A-Za-z][A-Za-z0-9]{2,62}$.
func validTableName(name string) error {
	ok := len(name) >= 3 && len(name) <= 63
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		ok = letter || i > 0 && '0' <= c && c <= '9'
	}
	if !ok {
		return fmt.Errorf("azure trace: invalid table name %q: 3-63 letters and digits, starting with a letter", name)
	}
	return nil
}

// validContainerName checks Blob Storage's rule: 3-63 lower-case letters, digits and
// single hyphens, starting and ending with a letter or digit.
func validContainerName(name string) error {
	ok := len(name) >= 3 && len(name) <= 63
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '-':
			ok = i > 0 && i < len(name)-1 && name[i-1] != '-'
		default:
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("azure trace: invalid container name %q: 3-63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit", name)
	}
	return nil
}

// hasTableCode reports whether err is a Table Storage error with one of codes.
func hasTableCode(err error, codes ...aztables.TableErrorCode) bool {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return false
	}
	for _, c := range codes {
		if re.ErrorCode == string(c) {
			return true
		}
	}
	return false
}

// isNotFound reports whether a table operation failed because the entity does not exist.
func isNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}

// isConflict reports whether a conditional table write lost a race (the entity appeared,
// or changed since it was read).
func isConflict(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && (re.StatusCode == http.StatusConflict || re.StatusCode == http.StatusPreconditionFailed)
}

// Edm.DateTime's range.
var (
	minTableTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTableTime = time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC)
)

// location is where the two index entities of one attempt live.
type location struct {
	KeyPartition string
	KeyRowKey    string
	BuPartition  string
	BuRowKey     string
}

func locate(r trace.JobRecord) location {
	rk := indexRowKey(r.StartedOn, r.RowGuid, r.Attempt, r.Version)
	return location{
		KeyPartition: keyPartition(r.SchedulerKey),
		KeyRowKey:    rk,
		BuPartition:  buDayPartition(r.BusinessUnitID, r.StartedOn),
		BuRowKey:     rk,
	}
}

func jobProperties(r trace.JobRecord) map[string]any {
	p := map[string]any{
		"SchedulerKey":   r.SchedulerKey,
		"RowGuid":        r.RowGuid,
		"RowId":          aztables.EDMInt64(r.RowID),
		"BusinessUnitId": r.BusinessUnitID,
		"AutomationType": r.AutomationType,
		"Attempt":        aztables.EDMInt64(r.Attempt),
		"Version":        aztables.EDMInt64(r.Version),
		"Outcome":        string(r.Outcome),
		"ReasonCode":     r.ReasonCode,
		"ErrorCode":      r.ErrorCode,
		"Message":        r.Message,
		"StartedOn":      aztables.EDMDateTime(r.StartedOn),
		"UtcDay":         r.StartedOn.Format(time.DateOnly),
		"TraceBlobName":  r.TraceBlobName,
	}
	if !r.FinishedOn.IsZero() {
		p["FinishedOn"] = aztables.EDMDateTime(r.FinishedOn)
	}
	return p
}

func marshalEntity(pk, rk string, props map[string]any) ([]byte, error) {
	if !validTableKey(pk) || !validTableKey(rk) {
		// The key helpers never produce such keys; this guards against a future edit.
		return nil, fmt.Errorf("azure trace: internal error: invalid table key %q/%q", pk, rk)
	}
	return json.Marshal(aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: pk, RowKey: rk}, Properties: props})
}

// normalize brings a record to what the table stores: UTC, millisecond precision.
func normalize(r trace.JobRecord) (trace.JobRecord, error) {
	r.StartedOn = r.StartedOn.UTC().Truncate(time.Millisecond)
	if r.StartedOn.Before(minTableTime) || r.StartedOn.After(maxTableTime) {
		return r, fmt.Errorf("azure trace: StartedOn %v of %s/%d/v%d is outside Table Storage's date range (1601-9999)", r.StartedOn, r.RowGuid, r.Attempt, r.Version)
	}
	if !r.FinishedOn.IsZero() {
		r.FinishedOn = r.FinishedOn.UTC().Truncate(time.Millisecond)
		if r.FinishedOn.Before(minTableTime) || r.FinishedOn.After(maxTableTime) {
			return r, fmt.Errorf("azure trace: FinishedOn %v of %s/%d/v%d is outside Table Storage's date range (1601-9999)", r.FinishedOn, r.RowGuid, r.Attempt, r.Version)
		}
	}
	return r, nil
}

// maxIdentityRaces bounds how often WriteJob retries after losing the identity entity to a
// concurrent write of the same attempt. Every lost race means another writer's write
// succeeded (and that writer is done), so n concurrent writers of one attempt all finish
// within n tries; the retries of one worker never come close. A writer that gives up may
// leave its index entities behind; its caller's retry of the same record adopts them.
const maxIdentityRaces = 10

// pendingJob is one record ready to write: its entities, marshalled once.
type pendingJob struct {
	rec        trace.JobRecord
	loc        location
	byKey      []byte // index entity in loc.KeyPartition
	byBU       []byte // index entity in loc.BuPartition
	idPK, idRK string // identity entity
	identity   []byte
}

func (p *pendingJob) String() string {
	return fmt.Sprintf("%s/%d/v%d", p.rec.RowGuid, p.rec.Attempt, p.rec.Version)
}

func prepare(r trace.JobRecord) (*pendingJob, error) {
	r, err := normalize(r)
	if err != nil {
		return nil, err
	}
	p := &pendingJob{rec: r, loc: locate(r), idPK: identityPartition(r.RowGuid), idRK: identityRowKey(r.Attempt, r.Version)}
	props := jobProperties(r)
	if p.byKey, err = marshalEntity(p.loc.KeyPartition, p.loc.KeyRowKey, props); err != nil {
		return nil, err
	}
	if p.byBU, err = marshalEntity(p.loc.BuPartition, p.loc.BuRowKey, props); err != nil {
		return nil, err
	}
	p.identity, err = marshalEntity(p.idPK, p.idRK, map[string]any{
		"KeyPartition": p.loc.KeyPartition, "KeyRowKey": p.loc.KeyRowKey,
		"BuPartition": p.loc.BuPartition, "BuRowKey": p.loc.BuRowKey,
		"RowGuid": r.RowGuid, "Attempt": aztables.EDMInt64(r.Attempt), "Version": aztables.EDMInt64(r.Version),
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// WriteJob implements trace.Writer: upsert both index entities, delete the ones a previous
// write of the same (RowGuid, Attempt, Version) left elsewhere, then record the location.
func (s *TraceStore) WriteJob(ctx context.Context, r trace.JobRecord) error {
	p, err := prepare(r)
	if err != nil {
		return err
	}
	return s.write(ctx, p)
}

func (s *TraceStore) write(ctx context.Context, p *pendingJob) error {
	for range maxIdentityRaces {
		prev, etag, found, err := s.readIdentity(ctx, p.idPK, p.idRK)
		if err != nil {
			return fmt.Errorf("azure trace: write job %s: %w", p, err)
		}
		if err := s.upsertBoth(ctx, p.byKey, p.byBU); err != nil {
			return fmt.Errorf("azure trace: write job %s: %w", p, err)
		}
		if found {
			if err := s.deleteStale(ctx, prev, p.loc); err != nil {
				return fmt.Errorf("azure trace: write job %s: remove previous index entities: %w", p, err)
			}
		}
		err = s.writeIdentity(ctx, p, etag, found)
		if isConflict(err) {
			continue // another write of this attempt got there first: re-read and converge
		}
		if err != nil {
			return fmt.Errorf("azure trace: write job %s: identity: %w", p, err)
		}
		return nil
	}
	return fmt.Errorf("azure trace: write job %s: still racing other writes of the same attempt after %d tries", p, maxIdentityRaces)
}

// writeIdentity records p's location: a conditional replace of the entity read (etag), or
// an insert when there was none. Either fails with a conflict when another write of the
// same attempt came in between.
func (s *TraceStore) writeIdentity(ctx context.Context, p *pendingJob, etag azcore.ETag, found bool) error {
	if found {
		_, err := s.table.UpdateEntity(ctx, p.identity, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
		return err
	}
	_, err := s.table.AddEntity(ctx, p.identity, nil)
	return err
}

// Batch tuning: requests in flight at once, and the limits of one entity group transaction
// (100 operations, 4 MiB; we stay well under the size).
const (
	batchParallelism      = 16
	maxTransactionActions = 100
	maxTransactionBytes   = 2 << 20
)

var _ trace.BatchWriter = (*TraceStore)(nil)

// WriteJobs implements trace.BatchWriter with the semantics of WriteJob for each record
// (a record repeated in rs counts once, the last copy winning), in four phases of parallel
// requests: read the identity entities; upsert the index entities, one entity group
// transaction per partition (a poll batch shares its business-unit day partitions, so most
// rows of a batch go in one request); delete index entities that rewrites moved; write the
// identity entities. A record whose identity changed meanwhile is finished by WriteJob's
// converging path. Every record is validated before anything is written.
func (s *TraceStore) WriteJobs(ctx context.Context, rs []trace.JobRecord) error {
	var jobs []*pendingJob
	index := map[[2]string]int{} // identity → position in jobs
	for _, r := range rs {
		p, err := prepare(r)
		if err != nil {
			return err
		}
		id := [2]string{p.idPK, p.idRK}
		if i, dup := index[id]; dup {
			jobs[i] = p
			continue
		}
		index[id] = len(jobs)
		jobs = append(jobs, p)
	}
	if len(jobs) == 0 {
		return nil
	}

	type previous struct {
		loc   location
		etag  azcore.ETag
		found bool
	}
	prev := make([]previous, len(jobs))
	err := parallel(ctx, len(jobs), func(i int) error {
		loc, etag, found, err := s.readIdentity(ctx, jobs[i].idPK, jobs[i].idRK)
		prev[i] = previous{loc, etag, found}
		return err
	})
	if err != nil {
		return fmt.Errorf("azure trace: write jobs: %w", err)
	}

	groups := map[string][][]byte{}
	var partitions []string
	for _, p := range jobs {
		for _, e := range []struct {
			pk     string
			entity []byte
		}{{p.loc.KeyPartition, p.byKey}, {p.loc.BuPartition, p.byBU}} {
			if _, ok := groups[e.pk]; !ok {
				partitions = append(partitions, e.pk)
			}
			groups[e.pk] = append(groups[e.pk], e.entity)
		}
	}
	var chunks [][][]byte
	for _, pk := range partitions {
		chunks = append(chunks, transactionChunks(groups[pk])...)
	}
	if err := parallel(ctx, len(chunks), func(i int) error { return s.upsertChunk(ctx, chunks[i]) }); err != nil {
		return fmt.Errorf("azure trace: write jobs: %w", err)
	}

	if err := parallel(ctx, len(jobs), func(i int) error {
		if !prev[i].found {
			return nil
		}
		return s.deleteStale(ctx, prev[i].loc, jobs[i].loc)
	}); err != nil {
		return fmt.Errorf("azure trace: write jobs: remove previous index entities: %w", err)
	}

	if err := parallel(ctx, len(jobs), func(i int) error {
		err := s.writeIdentity(ctx, jobs[i], prev[i].etag, prev[i].found)
		if isConflict(err) {
			return s.write(ctx, jobs[i])
		}
		if err != nil {
			return fmt.Errorf("write job %s: identity: %w", jobs[i], err)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("azure trace: write jobs: %w", err)
	}
	return nil
}

// transactionChunks splits one partition's entities into transactions within the limits.
func transactionChunks(entities [][]byte) [][][]byte {
	var out [][][]byte
	var cur [][]byte
	size := 0
	for _, e := range entities {
		if len(cur) == maxTransactionActions || len(cur) > 0 && size+len(e) > maxTransactionBytes {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, e)
		size += len(e)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// upsertChunk insert-or-replaces entities of one partition: one request either way.
func (s *TraceStore) upsertChunk(ctx context.Context, entities [][]byte) error {
	if len(entities) == 1 {
		_, err := s.table.UpsertEntity(ctx, entities[0], &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
		return err
	}
	actions := make([]aztables.TransactionAction, len(entities))
	for i, e := range entities {
		actions[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: e}
	}
	_, err := s.table.SubmitTransaction(ctx, actions, nil)
	return err
}

// parallel runs fn(0..n-1), at most batchParallelism at a time, and joins the errors.
func parallel(ctx context.Context, n int, fn func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, batchParallelism)
	var wg sync.WaitGroup
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			errs[i] = ctx.Err()
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *TraceStore) readIdentity(ctx context.Context, pk, rk string) (location, azcore.ETag, bool, error) {
	resp, err := s.table.GetEntity(ctx, pk, rk, nil)
	if isNotFound(err) {
		return location{}, "", false, nil
	}
	if err != nil {
		return location{}, "", false, fmt.Errorf("read identity: %w", err)
	}
	var loc location
	if err := json.Unmarshal(resp.Value, &loc); err != nil {
		return location{}, "", false, fmt.Errorf("decode identity: %w", err)
	}
	return loc, resp.ETag, true, nil
}

func (s *TraceStore) upsertBoth(ctx context.Context, byKey, byBU []byte) error {
	opts := &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}
	var wg sync.WaitGroup
	var errKey, errBU error
	wg.Go(func() { _, errKey = s.table.UpsertEntity(ctx, byKey, opts) })
	wg.Go(func() { _, errBU = s.table.UpsertEntity(ctx, byBU, opts) })
	wg.Wait()
	return errors.Join(errKey, errBU)
}

// deleteStale removes the index entities prev points at that now differs from.
func (s *TraceStore) deleteStale(ctx context.Context, prev, now location) error {
	var errs []error
	del := func(pk, rk string) {
		if pk == "" || rk == "" {
			return
		}
		if _, err := s.table.DeleteEntity(ctx, pk, rk, nil); err != nil && !isNotFound(err) {
			errs = append(errs, err)
		}
	}
	if prev.KeyPartition != now.KeyPartition || prev.KeyRowKey != now.KeyRowKey {
		del(prev.KeyPartition, prev.KeyRowKey)
	}
	if prev.BuPartition != now.BuPartition || prev.BuRowKey != now.BuRowKey {
		del(prev.BuPartition, prev.BuRowKey)
	}
	return errors.Join(errs...)
}

// edmInt64 decodes an Edm.Int64 property, which the service sends as a JSON string (and
// a JSON number when it was stored as Int32).
type edmInt64 int64

func (v *edmInt64) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("integer property %s: %w", b, err)
	}
	*v = edmInt64(n)
	return nil
}

// jobEntity is the read side of jobProperties.
type jobEntity struct {
	SchedulerKey   string
	RowGuid        string
	RowID          edmInt64 `json:"RowId"`
	BusinessUnitID string   `json:"BusinessUnitId"`
	AutomationType string
	Attempt        edmInt64
	Version        edmInt64
	Outcome        string
	ReasonCode     string
	ErrorCode      string
	Message        string
	StartedOn      time.Time
	FinishedOn     *time.Time
	TraceBlobName  string
}

func (e jobEntity) record() trace.JobRecord {
	r := trace.JobRecord{
		SchedulerKey:   e.SchedulerKey,
		RowGuid:        e.RowGuid,
		RowID:          int64(e.RowID),
		BusinessUnitID: e.BusinessUnitID,
		AutomationType: e.AutomationType,
		Attempt:        int(e.Attempt),
		Version:        int64(e.Version),
		Outcome:        trace.Outcome(e.Outcome),
		ReasonCode:     e.ReasonCode,
		ErrorCode:      e.ErrorCode,
		Message:        e.Message,
		StartedOn:      e.StartedOn.UTC(),
		TraceBlobName:  e.TraceBlobName,
	}
	if e.FinishedOn != nil {
		r.FinishedOn = e.FinishedOn.UTC()
	}
	return r
}

// odataString quotes s as an OData string literal.
func odataString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// list reads one partition (filtered further by filter), in RowKey order, stopping after
// limit rows when limit > 0.
func (s *TraceStore) list(ctx context.Context, partition, filter string, limit int) ([]trace.JobRecord, error) {
	f := "PartitionKey eq " + odataString(partition) + " and " + filter
	opts := &aztables.ListEntitiesOptions{Filter: &f}
	if limit > 0 {
		top := int32(limit)
		opts.Top = &top
	}
	var out []trace.JobRecord
	pager := s.table.NewListEntitiesPager(opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, raw := range page.Entities {
			var e jobEntity
			if err := json.Unmarshal(raw, &e); err != nil {
				return nil, fmt.Errorf("decode trace row: %w", err)
			}
			out = append(out, e.record())
			if limit > 0 && len(out) == limit {
				return out, nil
			}
		}
	}
	return out, nil
}

// JobsByKey implements trace.Reader: one partition read.
func (s *TraceStore) JobsByKey(ctx context.Context, schedulerKey string) ([]trace.JobRecord, error) {
	out, err := s.list(ctx, keyPartition(schedulerKey), "SchedulerKey eq "+odataString(schedulerKey), 0)
	if err != nil {
		return nil, fmt.Errorf("azure trace: jobs by key: %w", err)
	}
	// RowKey order is already StartedOn order; this settles ties as the local store does.
	slices.SortStableFunc(out, func(a, b trace.JobRecord) int {
		return cmp.Or(a.StartedOn.Compare(b.StartedOn), cmp.Compare(a.Attempt, b.Attempt),
			cmp.Compare(a.Version, b.Version), strings.Compare(a.RowGuid, b.RowGuid))
	})
	return out, nil
}

// JobsByBusinessUnitDay implements trace.Reader: one partition read, oldest first, at most
// limit (1..MaxJobsPerDay) rows.
func (s *TraceStore) JobsByBusinessUnitDay(ctx context.Context, businessUnitID, utcDay string, limit int) ([]trace.JobRecord, error) {
	day, err := time.Parse(time.DateOnly, utcDay)
	if err != nil {
		return nil, fmt.Errorf("azure trace: day %q is not YYYY-MM-DD", utcDay)
	}
	if limit < 1 || limit > MaxJobsPerDay {
		return nil, fmt.Errorf("azure trace: limit %d outside 1..%d", limit, MaxJobsPerDay)
	}
	out, err := s.list(ctx, buDayPartition(businessUnitID, day), "BusinessUnitId eq "+odataString(businessUnitID), limit)
	if err != nil {
		return nil, fmt.Errorf("azure trace: jobs by business unit day: %w", err)
	}
	return out, nil
}

// validBlobName rejects names that could escape the container's flat namespace, or that
// Blob Storage would alter: see TraceStore.
func validBlobName(name string) error {
	why := ""
	switch {
	case name == "":
		why = "empty"
	case len(name) > 1024:
		why = "longer than 1024 bytes"
	case !utf8.ValidString(name):
		why = "not UTF-8"
	case strings.HasPrefix(name, "/"):
		why = "absolute"
	case path.Clean(name) != name:
		why = "not a clean path (//, ./, ../ or a trailing /)"
	}
	if why == "" {
		for _, r := range name {
			if r < 0x20 || 0x7f <= r && r <= 0x9f || r == '\\' {
				why = "contains a control character or a backslash"
				break
			}
		}
	}
	if why == "" {
		for seg := range strings.SplitSeq(name, "/") {
			if seg == "" || strings.HasSuffix(seg, ".") {
				why = "a path segment is empty, '.', '..' or ends with '.'"
				break
			}
		}
	}
	if why != "" {
		return fmt.Errorf("azure trace: invalid blob name %q: %s", name, why)
	}
	return nil
}

// blobContentType labels a blob for people downloading it from the portal.
func blobContentType(name string) string {
	switch path.Ext(name) {
	case ".json":
		return "application/json"
	case ".csv":
		return "text/csv"
	case ".txt", ".log":
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// PutBlob implements trace.Writer with one Put Blob request (atomic overwrite). Blobs are
// limited to blockblob.MaxUploadBlobBytes (256 MiB); diagnostics are far smaller.
func (s *TraceStore) PutBlob(ctx context.Context, name string, data []byte) error {
	if err := validBlobName(name); err != nil {
		return err
	}
	if len(data) > blockblob.MaxUploadBlobBytes {
		return fmt.Errorf("azure trace: blob %q is %d bytes, more than one upload allows (%d)", name, len(data), blockblob.MaxUploadBlobBytes)
	}
	ct := blobContentType(name)
	_, err := s.container.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)),
		&blockblob.UploadOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentType: &ct}})
	if err != nil {
		return fmt.Errorf("azure trace: put blob %q: %w", name, err)
	}
	return nil
}

// GetBlob implements trace.Reader.
func (s *TraceStore) GetBlob(ctx context.Context, name string) ([]byte, error) {
	if err := validBlobName(name); err != nil {
		return nil, err
	}
	resp, err := s.container.NewBlobClient(name).DownloadStream(ctx, nil)
	if bloberror.HasCode(err, bloberror.BlobNotFound) {
		return nil, trace.ErrBlobNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("azure trace: get blob %q: %w", name, err)
	}
	body := resp.NewRetryReader(ctx, nil)
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("azure trace: get blob %q: %w", name, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
