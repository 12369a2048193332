package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/local"
)

// seen is what one handler call saw of its invocation.
type seen struct {
	data, md map[string]json.RawMessage
	id       string
}

// handOverHost is a local host over a router with a one-message and a batch Service Bus
// function, each recording its invocation; asHTTP hides the router's in-process entry, so
// the host POSTs each invocation as it did before (and as it does for any other handler).
// fail makes every handler fail with it.
func handOverHost(t *testing.T, asHTTP bool, fail error) (*local.Host, *[]seen, *int) {
	t.Helper()
	var got []seen
	posts := 0
	r := funchost.NewRouter(nil)
	rec := func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		got = append(got, seen{data: maps.Clone(inv.Request.Data), md: maps.Clone(inv.Request.Metadata), id: inv.InvocationID})
		return funchost.Result{Logs: []string{"handled"}}, fail
	}
	r.Register("One", rec)
	r.Register("Many", rec)
	defs := []funchost.FunctionDef{
		{Name: "One", Trigger: funchost.BindingDef{Name: "message", Type: funchost.TriggerServiceBus, QueueName: "one"}},
		{Name: "Many", Trigger: funchost.BindingDef{Name: "messages", Type: funchost.TriggerServiceBus, QueueName: "many", Cardinality: funchost.CardinalityMany}},
	}
	var handler http.Handler = countingRouter{Router: r, posts: &posts}
	if asHTTP {
		handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { posts++; r.ServeHTTP(w, req) })
	}
	clock := automation.NewManualClock(time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC))
	h, err := local.NewHost(handler, bus.NewMemory(nil), defs, func(string) (string, bool) { return "", false }, clock, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h, &got, &posts
}

// TestHostHandsOverWhatItWouldPost: the local host hands the router its Service Bus
// invocations already decoded (funchost.Router.Invoke) instead of POSTing them, and the
// handler sees exactly the Data and Metadata it saw through HTTP (a body with quotes, '<',
// '&' and non-ASCII; a session; a batch), a fresh invocation id each time, and the host
// gets the same status and reply body, on success and on failure.
func TestHostHandsOverWhatItWouldPost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := bus.Message{ID: "m-1", Destination: "one", SessionID: "CUST-1", Body: []byte(`{"text":"a \"quoted\" <b>&amp; é\u2028"}`), DeliveryCount: 2,
		TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	for _, fail := range []error{nil, errors.New("try again"), automation.Permanent(errors.New("never"))} {
		direct, dGot, dPosts := handOverHost(t, false, fail)
		viaHTTP, hGot, hPosts := handOverHost(t, true, fail)
		for _, dest := range []string{"one", "many"} {
			dc, db, derr := direct.Deliver(ctx, dest, m)
			hc, hb, herr := viaHTTP.Deliver(ctx, dest, m)
			if derr != nil || herr != nil || dc != hc || string(db) != string(hb) {
				t.Fatalf("fail %v, %s: in process %d %s %v; over HTTP %d %s %v", fail, dest, dc, db, derr, hc, hb, herr)
			}
		}
		if *dPosts != 0 || *hPosts != 2 {
			t.Fatalf("fail %v: %d POSTs in process, %d over HTTP; want 0 and 2", fail, *dPosts, *hPosts)
		}
		if len(*dGot) != 2 || len(*hGot) != 2 {
			t.Fatalf("fail %v: handled %d in process, %d over HTTP; want 2 each", fail, len(*dGot), len(*hGot))
		}
		for i := range *dGot {
			d, h := (*dGot)[i], (*hGot)[i]
			if !maps.EqualFunc(d.data, h.data, rawEqual) || !maps.EqualFunc(d.md, h.md, rawEqual) {
				t.Fatalf("fail %v, invocation %d: in process Data %s Metadata %s; over HTTP Data %s Metadata %s", fail, i, d.data, d.md, h.data, h.md)
			}
			if d.id == "" || d.id == h.id {
				t.Fatalf("invocation id %q in process, %q over HTTP; want a fresh one", d.id, h.id)
			}
		}
	}
}

// countingRouter is the router (both of its entries) counting what comes through ServeHTTP.
type countingRouter struct {
	*funchost.Router
	posts *int
}

func (c countingRouter) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	*c.posts++
	c.Router.ServeHTTP(w, req)
}

func rawEqual(a, b json.RawMessage) bool { return string(a) == string(b) }

// BenchmarkHostDeliverBatch: one batch of 100 tracking-sized messages through the local host
// to a batch function that decodes it, handed over in process (the router's Invoke) or
// POSTed as before (http): the embedded host's share of a W6 login's CPU.
func BenchmarkHostDeliverBatch(b *testing.B) {
	for _, asHTTP := range []bool{false, true} {
		name := "in-process"
		if asHTTP {
			name = "http"
		}
		b.Run(name, func(b *testing.B) {
			r := funchost.NewRouter(nil)
			r.Register("Many", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
				items, err := inv.ServiceBusBatch("messages")
				if err != nil || len(items) != 100 {
					return funchost.Result{}, fmt.Errorf("batch of %d: %v", len(items), err)
				}
				return funchost.Result{}, nil
			})
			var handler http.Handler = r
			if asHTTP {
				handler = http.HandlerFunc(r.ServeHTTP)
			}
			defs := []funchost.FunctionDef{{Name: "Many", Trigger: funchost.BindingDef{Name: "messages", Type: funchost.TriggerServiceBus, QueueName: "many", Cardinality: funchost.CardinalityMany}}}
			clock := automation.NewManualClock(time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC))
			mem := bus.NewMemory(&bus.MemoryOptions{DuplicateWindow: 1})
			if _, err := local.NewHost(handler, mem, defs, func(string) (string, bool) { return "", false }, clock, nil); err != nil {
				b.Fatal(err)
			}
			body := []byte(`{"specversion":"1.0","id":"evt-0000000001","source":"/app","type":"Login","subject":"CUST-W6-0000001","time":"2026-10-01T08:00:00Z","data":{"customerId":"CUST-W6-0000001","channel":"web","device":"ios"}}`)
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				for j := range 100 {
					if err := mem.Publish(ctx, bus.Message{ID: fmt.Sprintf("m-%d-%d", i, j), Destination: "many", SessionID: fmt.Sprintf("CUST-%d", j), Body: body,
						TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}); err != nil {
						b.Fatal(err)
					}
				}
				if n, err := mem.Drain(ctx, 0); err != nil || n != 100 {
					b.Fatalf("drained %d, %v", n, err)
				}
			}
			b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "messages/s")
		})
	}
}
