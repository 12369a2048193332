package otlptest

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened.
type Span struct {
	TraceID, SpanID, ParentID string // hex; ParentID "" for a root
	Name                      string
	Kind                      string // SPAN_KIND_SERVER, ...
	Attributes                map[string]string
	Links                     []string // the linked spans' trace ids
	StartNano                 uint64
	Error                     bool
}

// Receiver is a running OTLP/HTTP endpoint. URL is its base (OTEL_EXPORTER_OTLP_ENDPOINT).
type Receiver struct {
	URL    string
	server *httptest.Server

	mu       sync.Mutex
	spans    []Span
	requests int // metric export requests received
}

// Start starts a receiver on 127.0.0.1; Close stops it.
func Start() *Receiver {
	r := &Receiver{}
	r.server = httptest.NewServer(Handler(func(got []Span) {
		r.mu.Lock()
		r.spans = append(r.spans, got...)
		r.mu.Unlock()
	}, func() {
		r.mu.Lock()
		r.requests++
		r.mu.Unlock()
	}))
	r.URL = r.server.URL
	return r
}

// Handler is the OTLP/HTTP endpoint (protobuf encoding): POST /v1/traces decodes an
// ExportTraceServiceRequest and calls onSpans with its spans, flattened, in the order they
// came; POST /v1/metrics reads the body and calls onMetrics (nil: nothing). A body that is
// not an OTLP protobuf trace export is answered 400 and reaches no callback. onSpans is
// called from the request's goroutine, so concurrent exports call it concurrently.
func Handler(onSpans func([]Span), onMetrics func()) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) { traces(w, req, onSpans) })
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		if onMetrics != nil {
			onMetrics()
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	})
	return mux
}

// KeyAttributes are the attributes Line prints, in this order (docs/observability.md's
// span listing).
var KeyAttributes = []string{"automation.event_id", "automation.command_id", "automation.status", "messaging.message.id", "faas.trigger", "http.response.status_code"}

// Line renders s in docs/observability.md's listing format: name, kind (without the
// SPAN_KIND_ prefix), span id, parent (its id and parentName, or "(root)"), and the
// KeyAttributes it has. parentName may be "" when the parent is not known (yet).
func Line(s Span, parentName string) string {
	parent := "(root)"
	if s.ParentID != "" {
		parent = strings.TrimSpace(s.ParentID + " " + parentName)
	}
	var parts []string
	for _, k := range KeyAttributes {
		if v := s.Attributes[k]; v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.TrimRight(fmt.Sprintf("%-28s %-9s span=%s parent=%-44s %s", s.Name, strings.TrimPrefix(s.Kind, "SPAN_KIND_"), s.SpanID, parent, strings.Join(parts, " ")), " ")
}

// Close stops the receiver.
func (r *Receiver) Close() { r.server.Close() }

func traces(w http.ResponseWriter, req *http.Request, onSpans func([]Span)) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var in coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &in); err != nil {
		http.Error(w, "not an OTLP protobuf trace export: "+err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range in.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					Name: s.GetName(), Kind: s.GetKind().String(), Attributes: map[string]string{}, StartNano: s.GetStartTimeUnixNano(),
					Error: s.GetStatus().GetCode().String() == "STATUS_CODE_ERROR"}
				if p := s.GetParentSpanId(); len(p) > 0 {
					sp.ParentID = hex.EncodeToString(p)
				}
				for _, kv := range s.GetAttributes() {
					sp.Attributes[kv.GetKey()] = value(kv.GetValue())
				}
				for _, l := range s.GetLinks() {
					sp.Links = append(sp.Links, hex.EncodeToString(l.GetTraceId()))
				}
				got = append(got, sp)
			}
		}
	}
	onSpans(got)
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	}
	return v.String()
}

// Spans returns every span received so far, ordered by start time.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]Span(nil), r.spans...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartNano < out[j].StartNano })
	return out
}

// Trace returns the spans of trace id, ordered by start time.
func (r *Receiver) Trace(id string) []Span {
	var out []Span
	for _, s := range r.Spans() {
		if s.TraceID == id {
			out = append(out, s)
		}
	}
	return out
}
