package funchost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/funchost"
)

// TestRouterInvokeAnswersAsServeHTTP: Router.Invoke (the embedded host's in-process entry)
// runs the same handler with the same decoded request, and answers the status and body
// ServeHTTP writes for the same invocation POSTed by the host: a result with outputs and
// logs, a permanent failure, a "retry after", a plain failure, a panic, an unknown function;
// and it applies the invocation timeout as ServeHTTP does.
func TestRouterInvokeAnswersAsServeHTTP(t *testing.T) {
	t.Parallel()
	r := funchost.NewRouter(&funchost.RouterOptions{InvocationTimeout: 50 * time.Millisecond})
	var seen []*funchost.InvocationRequest
	reg := func(name string, res funchost.Result, err error) {
		r.Register(name, func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
			seen = append(seen, inv.Request)
			if name == "Panics" {
				panic("boom")
			}
			if name == "Slow" {
				<-ctx.Done()
				return funchost.Result{}, ctx.Err()
			}
			return res, err
		})
	}
	reg("Ok", funchost.Result{Outputs: map[string]any{"out": map[string]int{"n": 1}}, Logs: []string{"one"}, ReturnValue: "rv"}, nil)
	reg("Permanent", funchost.Result{Logs: []string{"kept"}}, automation.Permanent(errors.New("never")))
	reg("Later", funchost.Result{}, automation.RetryAfter(time.Second, errors.New("not now")))
	reg("Fails", funchost.Result{}, errors.New("broken"))
	reg("Panics", funchost.Result{}, nil)
	reg("Slow", funchost.Result{}, nil)
	req := &funchost.InvocationRequest{
		Data:     map[string]json.RawMessage{"message": json.RawMessage(`"\"{\\\"a\\\":1}\""`)},
		Metadata: map[string]json.RawMessage{"MessageId": json.RawMessage(`"\"m-1\""`), "DeliveryCount": json.RawMessage(`"1"`)},
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Ok", "ok", "Permanent", "Later", "Fails", "Panics", "Slow", "Nope", "a/b"} {
		seen = nil
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/"+name, bytes.NewReader(body)))
		code, got := r.Invoke(context.Background(), name, "inv-1", req)
		if code != w.Code || string(got) != w.Body.String() {
			t.Fatalf("%s: Invoke %d %s; ServeHTTP %d %s", name, code, got, w.Code, w.Body.String())
		}
		if len(seen) == 2 && (!bytes.Equal(seen[0].Data["message"], seen[1].Data["message"]) || len(seen[0].Metadata) != len(seen[1].Metadata)) {
			t.Fatalf("%s: the handler saw %+v over HTTP, %+v in process", name, seen[0], seen[1])
		}
	}
	// Nil maps are taken as empty, as a body without Data or Metadata is.
	if code, got := r.Invoke(context.Background(), "Ok", "", &funchost.InvocationRequest{}); code != http.StatusOK || len(seen) == 0 || seen[len(seen)-1].Data == nil || seen[len(seen)-1].Metadata == nil {
		t.Fatalf("empty request: %d %s", code, got)
	}
}
