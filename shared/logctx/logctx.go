package logctx

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Attribute keys used across the pipeline.
const (
	SchedulerKey   = "schedulerKey"
	SourceEventID  = "sourceEventId"
	BusinessUnitID = "businessUnitId"
	Function       = "function"
	InvocationID   = "invocationId"
	Step           = "step"
	ErrorCode      = "errorCode"
	// TraceID and SpanID are added by Handler from the OpenTelemetry span in the context.
	TraceID = "trace_id"
	SpanID  = "span_id"
)

type key struct{}

// With returns ctx carrying args (slog key-value pairs or slog.Attr values) on top of the
// attributes it already carries; a key given again replaces the earlier value. Empty string
// values are skipped (an unknown id is left out rather than logged as "").
func With(ctx context.Context, args ...any) context.Context {
	prev, _ := ctx.Value(key{}).([]slog.Attr)
	r := slog.NewRecord(time.Time{}, 0, "", 0)
	r.Add(args...)
	out := make([]slog.Attr, 0, len(prev)+r.NumAttrs())
	added := map[string]slog.Attr{}
	var order []string
	r.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindString && a.Value.String() == "" {
			return true
		}
		if _, dup := added[a.Key]; !dup {
			order = append(order, a.Key)
		}
		added[a.Key] = a
		return true
	})
	for _, a := range prev {
		if _, replaced := added[a.Key]; !replaced {
			out = append(out, a)
		}
	}
	for _, k := range order {
		out = append(out, added[k])
	}
	return context.WithValue(ctx, key{}, out)
}

// Attrs returns the attributes ctx carries (nil for none).
func Attrs(ctx context.Context) []slog.Attr {
	if ctx == nil {
		return nil
	}
	a, _ := ctx.Value(key{}).([]slog.Attr)
	return a
}

// Handler adds the context's attributes to every record handled with that context, except
// keys the record sets itself (the call site knows better).
type Handler struct{ next slog.Handler }

// New returns a Handler in front of next.
func New(next slog.Handler) *Handler { return &Handler{next: next} }

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	extra := Attrs(ctx)
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		// Inside a traced operation: the line names its trace and span (W3C hex ids), so a log
		// search and a trace view find each other.
		extra = append(extra[:len(extra):len(extra)], slog.String(TraceID, sc.TraceID().String()), slog.String(SpanID, sc.SpanID().String()))
	}
	if len(extra) == 0 {
		return h.next.Handle(ctx, r)
	}
	own := make(map[string]bool, r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool { own[a.Key] = true; return true })
	out := r.Clone()
	for _, a := range extra {
		if !own[a.Key] {
			out.AddAttrs(a)
		}
	}
	return h.next.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler { return &Handler{next: h.next.WithAttrs(as)} }

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler { return &Handler{next: h.next.WithGroup(name)} }

// Logger returns l with its handler wrapped by Handler (nil l: a discarding logger), unless
// it is wrapped already.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	if _, ok := l.Handler().(*Handler); ok {
		return l
	}
	return slog.New(New(l.Handler()))
}
