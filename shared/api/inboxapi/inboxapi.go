// Package inboxapi holds the routes of the InboxApi function (docs/inbox.md): thin adapters
// over inbox.Service on shared/httpapi (problem details, strict query, If-Match, cursors,
// business-unit scope: a business unit the caller may not see answers 404 and nothing is
// written).
//
//	GET  /api/inbox/{recipientId}?businessUnitId=bu-1[&state=unread|read|all][&limit=20][&cursor=…]
//	     → 200 {"items":[Message…], "nextCursor":"…"}  newest first
//	POST /api/inbox/{recipientId}/messages/{id}/read?businessUnitId=bu-1   If-Match: "<version>"
//	     → 200 Message, ETag its version; 428 without If-Match, 412 stale, 404 unknown
//	GET  /api/inbox/{recipientId}/stream?businessUnitId=bu-1   [Last-Event-ID: <id>]
//	     → 200 text/event-stream: "id: <id>\nevent: message\ndata: <Message JSON>\n\n" per
//	       message with id > Last-Event-ID in id order, ": heartbeat" comments; 503 with
//	       Retry-After when the instance holds its maximum of streams
//
// A message's id is its number in the recipient's inbox (1, 2, 3, … in commit order).
package inboxapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/inbox"
	"github.com/automation-platform/automation/shared/store"
)

// Registrar is where routes go: funchost.Router.RegisterHTTP (or an http.ServeMux's Handle).
type Registrar interface {
	RegisterHTTP(pattern string, h http.Handler)
}

// Prefix is the path prefix of every route (the InboxApi function's route inbox/{*path}).
const Prefix = "/api/inbox/"

// Route patterns.
const (
	PathList     = "/api/inbox/{recipientId}"
	PathMarkRead = "/api/inbox/{recipientId}/messages/{id}/read"
	PathStream   = "/api/inbox/{recipientId}/stream"
)

// Options tune the stream route; zero values take the defaults.
type Options struct {
	Stream inbox.StreamOptions
	// WriteTimeout bounds one event's write to the client: a client that stops reading
	// ends its stream (default 30 s).
	WriteTimeout time.Duration
	// IOClock gives the instants write deadlines are set at (default
	// automation.SystemClock). A connection's deadline is a wall-clock instant (net.Conn),
	// so this is deliberately not the runtime's business Clock, which a test or replay may
	// hold still.
	IOClock automation.Clock
	// Units, when set, is where a business unit is looked up: one that does not exist
	// answers 404 (as one outside the caller's scope), not an empty inbox. nil: not checked.
	Units businessunit.Reader
}

// Register adds the inbox routes to reg.
func Register(reg Registrar, api *httpapi.API, svc *inbox.Service, o Options) {
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.IOClock == nil {
		o.IOClock = automation.SystemClock{}
	}
	h := handlers{svc: svc, api: api, o: o}
	reg.RegisterHTTP("GET "+PathList, api.Handler(h.list))
	reg.RegisterHTTP("POST "+PathMarkRead, api.Handler(h.markRead))
	reg.RegisterHTTP("GET "+PathStream, api.Handler(h.stream))
}

type handlers struct {
	svc *inbox.Service
	api *httpapi.API
	o   Options
}

// Message is a message as the API shows it.
type Message struct {
	ID             int64           `json:"id"`
	BusinessUnitID string          `json:"businessUnitId"`
	RecipientID    string          `json:"recipientId"`
	Template       string          `json:"template"`
	Subject        string          `json:"subject"`
	Text           string          `json:"text"`
	HTML           string          `json:"html"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	CreatedOn      time.Time       `json:"createdOn"`
	Read           bool            `json:"read"`
	ReadOn         *time.Time      `json:"readOn"`
	Version        int64           `json:"version"`
}

func view(m store.InboxMessage) Message {
	out := Message{ID: m.Seq, BusinessUnitID: m.BusinessUnitID, RecipientID: m.RecipientID, Template: m.Template, Subject: m.Subject,
		Text: m.Text, HTML: m.HTML, CreatedOn: m.CreatedOn, Read: m.ReadOn != nil, ReadOn: m.ReadOn, Version: m.Version}
	if m.PayloadJSON != "" && json.Valid([]byte(m.PayloadJSON)) {
		out.Payload = json.RawMessage(m.PayloadJSON)
	}
	return out
}

// Page is the list answer.
type Page struct {
	Items      []Message `json:"items"`
	NextCursor string    `json:"nextCursor,omitempty"`
}

// scoped checks the businessUnitId parameter: required, and one the caller may see (404
// otherwise, like an unknown one).
func (h handlers) scoped(r *http.Request, q httpapi.Query) (string, error) {
	bu := q.String("businessUnitId")
	if err := httpapi.RequireUnit(r, bu); err != nil {
		return "", err
	}
	if h.o.Units != nil {
		if _, err := h.o.Units.BusinessUnitGet(r.Context(), bu); errors.Is(err, store.ErrNotFound) {
			return "", automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
		} else if err != nil {
			return "", err
		}
	}
	return bu, nil
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId", "state", "limit", "cursor"); err != nil {
		return err
	}
	bu, err := h.scoped(r, q)
	if err != nil {
		return err
	}
	limit, err := q.Int("limit", inbox.DefaultPage, 1, inbox.MaxPage)
	if err != nil {
		return err
	}
	state := store.InboxState(q.String("state"))
	if state == "" {
		state = store.InboxAll
	}
	recipient := r.PathValue("recipientId")
	cursorQuery := "inbox:" + bu + ":" + recipient + ":" + string(state)
	var before int64
	if c := q.String("cursor"); c != "" {
		if err := httpapi.DecodeCursor(c, cursorQuery, &before); err != nil {
			return err
		}
	}
	page, err := h.svc.List(r.Context(), inbox.ListRequest{BusinessUnitID: bu, RecipientID: recipient, State: state, BeforeSeq: before, Limit: limit})
	if err != nil {
		return err
	}
	out := Page{Items: make([]Message, 0, len(page.Items))}
	for _, m := range page.Items {
		out.Items = append(out.Items, view(m))
	}
	if page.NextBefore > 0 {
		if out.NextCursor, err = httpapi.EncodeCursor(cursorQuery, page.NextBefore); err != nil {
			return err
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) markRead(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId"); err != nil {
		return err
	}
	bu, err := h.scoped(r, q)
	if err != nil {
		return err
	}
	var none struct{}
	if err := httpapi.DecodeOptionalJSON(r, &none); err != nil {
		return err
	}
	version, _, err := httpapi.IfMatch(r, true)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return automation.Errorf(automation.CodeNotFound, "message %q not found", r.PathValue("id"))
	}
	m, err := h.svc.MarkRead(r.Context(), bu, r.PathValue("recipientId"), id, version)
	if err != nil {
		return err
	}
	httpapi.SetETag(w, m.Version)
	httpapi.WriteJSON(w, http.StatusOK, view(m))
	return nil
}

// lastEventID reads the Last-Event-ID header: "" or a non-negative id as this API wrote it.
func lastEventID(r *http.Request) (int64, error) {
	v := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != v {
		return 0, &automation.Error{Code: automation.CodeMalformed, Field: "Last-Event-ID", Message: "must be an event id sent by this stream"}
	}
	return n, nil
}

func (h handlers) stream(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId"); err != nil {
		return err
	}
	bu, err := h.scoped(r, q)
	if err != nil {
		return err
	}
	last, err := lastEventID(r)
	if err != nil {
		return err
	}
	st, err := h.svc.OpenStream(bu, r.PathValue("recipientId"), h.o.Stream)
	if err != nil {
		return err
	}
	defer st.Close()
	rc := http.NewResponseController(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(s string) error {
		// Bounded per write: a client that stops reading fails here instead of holding the
		// stream (and its subscriber slot) open. Writers that cannot set deadlines (tests'
		// recorders) are left as they are.
		if err := rc.SetWriteDeadline(h.o.IOClock.Now().Add(h.o.WriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if _, err := w.Write([]byte(s)); err != nil {
			return err
		}
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
	if err := write("retry: 2000\n: connected\n\n"); err != nil {
		return nil
	}
	err = st.Run(r.Context(), last, func(e inbox.Event) error {
		if e.Message == nil {
			return write(": heartbeat\n\n")
		}
		b, err := json.Marshal(view(*e.Message))
		if err != nil {
			return err
		}
		return write(fmt.Sprintf("id: %d\nevent: message\ndata: %s\n\n", e.Message.Seq, b))
	})
	switch {
	case errors.Is(err, inbox.ErrDropped):
		_ = write(": dropped: reconnect with Last-Event-ID\n\n")
	case err != nil:
		h.api.Logger().Warn("inbox stream ended", "businessUnitId", bu, "error", err)
	}
	return nil // the answer has started: nothing more to say
}
