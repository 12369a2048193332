package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// serve listens on 127.0.0.1 and, without a token, answers its APIs and console to anyone
// who reaches it. A web page whose own name resolves to 127.0.0.1 (DNS rebinding) reaches it
// as the same origin: it could read the console's CSRF token and act, or call the open APIs.
// Such requests carry the page's host name, so serve answers only loopback host names.
func TestServeAnswersOnlyLoopbackHostNames(t *testing.T) {
	h := loopbackOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for host, want := range map[string]int{
		"127.0.0.1:7071":              http.StatusTeapot,
		"localhost:7071":              http.StatusTeapot,
		"LocalHost":                   http.StatusTeapot,
		"[::1]:7071":                  http.StatusTeapot,
		"127.0.0.1":                   http.StatusTeapot,
		"rebind.evil.example:7071":    http.StatusMisdirectedRequest,
		"127.0.0.1.evil.example":      http.StatusMisdirectedRequest,
		"localhost.evil.example:80":   http.StatusMisdirectedRequest,
		"":                            http.StatusMisdirectedRequest,
		"evil.example:7071@127.0.0.1": http.StatusMisdirectedRequest,
	} {
		r := httptest.NewRequest(http.MethodGet, "/api/console/", nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Host %q: %d, want %d", host, w.Code, want)
		}
	}
}
