package main

import (
	"net"
	"net/http"
	"strings"
)

// loopbackOnly answers 421 Misdirected Request to a request whose Host is not a loopback
// name (localhost, 127.0.0.0/8, ::1), with or without a port. serve listens on 127.0.0.1
// only, yet a web page whose own host name resolves to 127.0.0.1 (DNS rebinding) reaches
// it as that page's origin and could read the console's CSRF token or call the open APIs
// of a serve without -token; its requests carry the page's host name and stop here.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, "serve answers only requests addressed to localhost, 127.0.0.1 or [::1]", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
