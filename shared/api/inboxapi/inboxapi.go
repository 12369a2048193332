package inboxapi

import (
	"context"
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
type Registrar = httpapi.Registrar

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
	httpapi.Mount(reg, api, Routes(api, svc, o)...)
}

// Routes declares the routes over svc (nil: the declarations only, for checks).
func Routes(api *httpapi.API, svc *inbox.Service, o Options) []httpapi.Route {
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.IOClock == nil {
		o.IOClock = automation.SystemClock{}
	}
	h := handlers{svc: svc, api: api, o: o}
	return []httpapi.Route{
		httpapi.Endpoint[struct{}, Page]{Method: "GET", Path: PathList, Unit: httpapi.UnitQuery, Query: []string{"state"},
			Paging: &httpapi.Paging{Default: inbox.DefaultPage, Max: inbox.MaxPage}, Call: h.list},
		httpapi.Endpoint[struct{}, Message]{Method: "POST", Path: PathMarkRead, Unit: httpapi.UnitQuery, IfMatch: httpapi.IfMatchRequired,
			Body: httpapi.BodyOptional, ETag: func(m Message) int64 { return m.Version }, Call: h.markRead},
		httpapi.Raw{Method: "GET", Path: PathStream, Handler: h.stream},
	}
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

// known checks that a unit in the caller's scope exists (Options.Units): 404 otherwise,
// like one outside the scope.
func (h handlers) known(ctx context.Context, bu string) error {
	return httpapi.UnitStored(ctx, h.o.Units, bu)
}

func (h handlers) list(ctx context.Context, in *httpapi.In[struct{}]) (Page, error) {
	bu := in.Unit
	if err := h.known(ctx, bu); err != nil {
		return Page{}, err
	}
	state := store.InboxState(in.Query.String("state"))
	if state == "" {
		state = store.InboxAll
	}
	recipient := in.Path("recipientId")
	cursorQuery := "inbox:" + bu + ":" + recipient + ":" + string(state)
	var before int64
	if err := in.After(cursorQuery, &before); err != nil {
		return Page{}, err
	}
	page, err := h.svc.List(ctx, inbox.ListRequest{BusinessUnitID: bu, RecipientID: recipient, State: state, BeforeSeq: before, Limit: in.Limit})
	if err != nil {
		return Page{}, err
	}
	out := Page{Items: make([]Message, 0, len(page.Items))}
	for _, m := range page.Items {
		out.Items = append(out.Items, view(m))
	}
	if page.NextBefore > 0 {
		if out.NextCursor, err = httpapi.EncodeCursor(cursorQuery, page.NextBefore); err != nil {
			return Page{}, err
		}
	}
	return out, nil
}

func (h handlers) markRead(ctx context.Context, in *httpapi.In[struct{}]) (Message, error) {
	if err := h.known(ctx, in.Unit); err != nil {
		return Message{}, err
	}
	id, err := strconv.ParseInt(in.Path("id"), 10, 64)
	if err != nil || id < 1 {
		return Message{}, automation.Errorf(automation.CodeNotFound, "message %q not found", in.Path("id"))
	}
	m, err := h.svc.MarkRead(ctx, in.Unit, in.Path("recipientId"), id, in.Version)
	if err != nil {
		return Message{}, err
	}
	return view(m), nil
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
	bu, err := httpapi.QueryUnit(r, h.known)
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
