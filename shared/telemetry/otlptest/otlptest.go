package otlptest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
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
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.traces)
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.requests++
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	})
	r.server = httptest.NewServer(mux)
	r.URL = r.server.URL
	return r
}

// Close stops the receiver.
func (r *Receiver) Close() { r.server.Close() }

func (r *Receiver) traces(w http.ResponseWriter, req *http.Request) {
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
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.mu.Unlock()
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
