package funchost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/funchost"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

// A thin Service Bus handler: decode the trigger, call one service, return its error.
// Poison messages are recorded, then acknowledged with Permanent; anything else that
// fails is retried by the host.
func ExampleRouter() {
	r := funchost.NewRouter(&funchost.RouterOptions{Logger: slog.New(slog.DiscardHandler)})
	r.Register("NotificationDispatch", func(ctx context.Context, inv *funchost.Invocation) (funchost.Result, error) {
		msg, err := inv.ServiceBus("message")
		if err != nil {
			return funchost.Result{}, err // retried; dead-lettered by the broker at MaxDeliveryCount
		}
		var cmd struct{ NotificationID string }
		if err := json.Unmarshal(msg.Body, &cmd); err != nil {
			// (record the poison message here)
			return funchost.Result{}, automation.Permanent(fmt.Errorf("message %s: %w", msg.MessageID, err))
		}
		if cmd.NotificationID == "down" {
			return funchost.Result{}, errors.New("smtp unavailable")
		}
		return funchost.Result{Logs: []string{"sent " + cmd.NotificationID + " attempt " + fmt.Sprint(msg.DeliveryCount)}}, nil
	})

	post := func(body string) {
		data, _ := json.Marshal(body)        // the body as the broker holds it…
		data, _ = json.Marshal(string(data)) // …serialized once more by the host
		inv := `{"Data":{"message":` + string(data) + `},"Metadata":{"MessageId":"\"m-1\"","DeliveryCount":"1"}}`
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/NotificationDispatch", strings.NewReader(inv)))
		fmt.Println(rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	post(`{"NotificationID":"n-1"}`)
	post(`{"NotificationID":"down"}`)
	post(`not json`)
	// Output:
	// 200 application/json {"Outputs":{},"Logs":["sent n-1 attempt 1"],"ReturnValue":null}
	// 500 application/json {"error":"smtp unavailable"}
	// 200 application/json {"Outputs":{},"Logs":["permanent failure, not retried: message m-1: invalid character 'o' in literal null (expecting 'u')"],"ReturnValue":null}
}
