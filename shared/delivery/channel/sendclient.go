package channel

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// Request bounds every HTTP channel (webhook, FCM, SMS, WhatsApp) applies alike.
const (
	defaultRequestTimeout = 10 * time.Second
	maxRequestTimeout     = 5 * time.Minute
)

// requestTimeout is a channel's Timeout for one request: 0 means the 10 s default; a value
// outside 0..5m is an error naming the channel ("sms: timeout 6m0s outside 0..5m").
func requestTimeout(channel string, d time.Duration) (time.Duration, error) {
	if d == 0 {
		return defaultRequestTimeout, nil
	}
	if d < 0 || d > maxRequestTimeout {
		return 0, fmt.Errorf("%s: timeout %s outside 0..5m", channel, d)
	}
	return d, nil
}

// sendClient is a copy of base (nil: a new client on the default transport) with timeout
// bounding each request and redirects never followed: a redirect's answer is the answer
// (a 3xx maps like any other status the channel does not know), so a message is never
// posted to a place the configuration did not name.
func sendClient(base *http.Client, timeout time.Duration) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	c.Timeout = timeout
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// watchWrite returns ctx traced so that the flag turns true once the request was written in
// full: an error after that point leaves the outcome UNKNOWN (the receiver may have acted on
// it), one before it means nothing was sent.
func watchWrite(ctx context.Context) (context.Context, *atomic.Bool) {
	wrote := new(atomic.Bool)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			wrote.Store(true)
		}
	}}), wrote
}
