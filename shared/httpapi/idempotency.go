package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// HeaderIdempotencyKey is the request header carrying a client's idempotency key
// (IETF draft-ietf-httpapi-idempotency-key-header). HeaderIdempotentReplayed marks a
// stored response sent again.
const (
	HeaderIdempotencyKey     = "Idempotency-Key"
	HeaderIdempotentReplayed = "Idempotent-Replayed"
	// MaxIdempotencyKeyLength bounds a key (characters, visible ASCII only).
	MaxIdempotencyKeyLength = 150
	maxScopeLength          = 300
	// maxStoredResponseBytes bounds a stored response; larger ones are answered but not
	// stored (a retry runs the request again).
	maxStoredResponseBytes = 256 << 10
)

// replayedHeaders are the response headers stored and replayed with the body.
var replayedHeaders = []string{"Content-Type", "ETag", "Location"}

// idempotencyNamespace is the UUIDv5 namespace of DeterministicID.
var idempotencyNamespace = uuid.MustParse("3c9a7e52-1f0b-5d8e-a4c6-7b2e9f1d0a35")

type idemKey struct{}

type idemInfo struct{ scope, key string }

// DeterministicID returns a lower-case UUIDv5 derived from the request's Idempotency-Key
// (and its scope) and purpose, e.g. DeterministicID(ctx, "reminder-setting"). Handlers that
// create a resource use it as the new id so that a retry after a crash (created, response
// not stored) finds the resource instead of creating a second one. ok is false when the
// request carries no Idempotency-Key; then the handler picks a fresh id itself.
func DeterministicID(ctx context.Context, purpose string) (id string, ok bool) {
	info, ok := ctx.Value(idemKey{}).(idemInfo)
	if !ok {
		return "", false
	}
	return uuid.NewSHA1(idempotencyNamespace, []byte(info.scope+"\x00"+info.key+"\x00"+purpose)).String(), true
}

func validIdempotencyKey(k string) bool {
	if k == "" || len(k) > MaxIdempotencyKeyLength {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

func (a *API) idempotent(w http.ResponseWriter, r *http.Request, h HandlerFunc) {
	ctx := r.Context()
	fail := func(err error) { WriteError(w, r, a.o.Logger, err) }
	vals := r.Header.Values(HeaderIdempotencyKey)
	key := strings.TrimSpace(r.Header.Get(HeaderIdempotencyKey))
	if len(vals) != 1 || !validIdempotencyKey(key) {
		fail(&automation.Error{Code: automation.CodeMalformed, Field: HeaderIdempotencyKey,
			Message: "must be given once, 1 to " + strconv.Itoa(MaxIdempotencyKeyLength) + " visible ASCII characters"})
		return
	}
	if a.o.Idempotency == nil {
		fail(&automation.Error{Code: automation.CodeMalformed, Field: HeaderIdempotencyKey,
			Message: "is not supported by this deployment (no idempotency store configured)"})
		return
	}
	body, err := ReadBody(r)
	if err != nil {
		fail(err)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	scope := CallerFrom(ctx).Scope.String() + " " + r.Method + " " + r.URL.Path
	if len(scope) > maxScopeLength {
		sum := sha256.Sum256([]byte(scope))
		scope = "sha256:" + hex.EncodeToString(sum[:])
	}
	hash := requestHash(r.URL.RawQuery, body)
	now := a.o.Clock.Now().UTC()
	begun, err := a.o.Idempotency.IdempotencyBegin(ctx, store.IdempotencyBeginParams{
		Scope: scope, Key: key, RequestHash: hash, Now: now, Lease: a.o.IdempotencyLease})
	if err != nil {
		fail(err)
		return
	}
	if !begun.Started {
		rec := begun.Record
		switch {
		case rec.RequestHash != hash:
			fail(&automation.Error{Code: automation.CodeIdempotencyMismatch, Field: HeaderIdempotencyKey,
				Message: "was already used with a different request body; use a new key for a new request"})
		case !rec.Completed:
			retry := 1
			if rec.LeaseExpiresOn != nil {
				if s := int(rec.LeaseExpiresOn.Sub(now).Seconds()) + 1; s > retry {
					retry = s
				}
			}
			w.Header().Set("Retry-After", strconv.Itoa(retry))
			fail(&automation.Error{Code: automation.CodeInProgress, Field: HeaderIdempotencyKey,
				Message: "a request with this key is still being processed; retry later"})
		default:
			replay(w, rec)
		}
		return
	}

	// The lease this attempt holds fences its Complete and Release: once a retry has taken
	// the key over (this attempt ran past its lease), neither touches the record.
	var lease time.Time
	if begun.Record.LeaseExpiresOn != nil {
		lease = *begun.Record.LeaseExpiresOn
	}
	release := func(ctx context.Context) error {
		return a.o.Idempotency.IdempotencyRelease(ctx, store.IdempotencyReleaseParams{
			Scope: scope, Key: key, RequestHash: hash, LeaseExpiresOn: lease})
	}
	rec := newRecorder(w)
	r = r.WithContext(context.WithValue(ctx, idemKey{}, idemInfo{scope: scope, key: key}))
	func() {
		defer func() {
			if v := recover(); v != nil {
				_ = release(context.WithoutCancel(ctx))
				panic(v)
			}
		}()
		if err := h(rec, r); err != nil {
			WriteError(rec, r, a.o.Logger, err)
		}
	}()
	// Only successes are stored: every error answer means nothing changed (bad input,
	// conflict, server error), so the client may fix the request and retry with the same key.
	bg := context.WithoutCancel(ctx)
	if rec.status >= 200 && rec.status < 300 && !rec.streamed {
		headers := map[string]string{}
		for _, name := range replayedHeaders {
			if v := rec.header.Get(name); v != "" {
				headers[name] = v
			}
		}
		hj, _ := json.Marshal(headers)
		if err := a.o.Idempotency.IdempotencyComplete(bg, store.IdempotencyCompleteParams{
			Scope: scope, Key: key, RequestHash: hash, LeaseExpiresOn: lease, ResponseStatus: rec.status,
			ResponseHeadersJSON: string(hj), ResponseBody: rec.body.String(), Now: a.o.Clock.Now().UTC()}); err != nil {
			// The change is made; only the record is missing (or a retry that took the key
			// over after this attempt's lease stores its own). A retry after the lease runs
			// the handler again, which finds its DeterministicID resource.
			a.o.Logger.Error("idempotency record not stored", "error", err.Error(), "path", r.URL.Path)
		}
	} else if err := release(bg); err != nil {
		a.o.Logger.Error("idempotency record not released", "error", err.Error(), "path", r.URL.Path)
	}
	rec.flush()
}

// requestHash is the sha256 of the query string and the body (JSON compacted, so
// whitespace does not make two equal requests differ).
func requestHash(rawQuery string, body []byte) string {
	var compact bytes.Buffer
	if json.Compact(&compact, body) == nil {
		body = compact.Bytes()
	}
	h := sha256.New()
	h.Write([]byte(rawQuery))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func replay(w http.ResponseWriter, rec store.IdempotencyRecord) {
	var headers map[string]string
	_ = json.Unmarshal([]byte(rec.ResponseHeadersJSON), &headers)
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.Header().Set(HeaderIdempotentReplayed, "true")
	w.WriteHeader(rec.ResponseStatus)
	_, _ = io.WriteString(w, rec.ResponseBody)
}

// recorder buffers a handler's answer so it can be stored before it is sent. An answer
// larger than maxStoredResponseBytes is not stored: from that point it streams to the
// client as the handler writes it, so memory stays bounded whatever the handler writes.
type recorder struct {
	w        http.ResponseWriter // the client's
	header   http.Header
	status   int
	body     bytes.Buffer
	streamed bool // past the storage limit: headers and body went to w
}

func newRecorder(w http.ResponseWriter) *recorder { return &recorder{w: w, header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if !r.streamed && r.body.Len()+len(p) > maxStoredResponseBytes {
		r.streamed = true
		r.sendHeader()
		if _, err := r.w.Write(r.body.Bytes()); err != nil {
			return 0, err
		}
		r.body = bytes.Buffer{}
	}
	if r.streamed {
		return r.w.Write(p)
	}
	return r.body.Write(p)
}

func (r *recorder) sendHeader() {
	for k, v := range r.header {
		r.w.Header()[k] = v
	}
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.w.WriteHeader(r.status)
}

// flush sends a buffered answer (a streamed one is out already).
func (r *recorder) flush() {
	if r.streamed {
		return
	}
	r.sendHeader()
	_, _ = r.w.Write(r.body.Bytes())
}
