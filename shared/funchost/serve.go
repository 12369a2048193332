package funchost

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
	"time"
)

// PortEnv is the environment variable the host sets to the port it will call (docs/functions-protocol.md#wire-shape
// "Process environment and startup"). Read it in the config package and pass it to Addr.
const PortEnv = "FUNCTIONS_CUSTOMHANDLER_PORT"

// ErrInvalidPort is the cause of Addr's errors.
var ErrInvalidPort = errors.New("invalid port")

// Addr validates a FUNCTIONS_CUSTOMHANDLER_PORT value (decimal digits only, 1..65535) and
// returns the address to listen on: 127.0.0.1:PORT. The host always dials
// http://127.0.0.1:<port> (WorkerConstants.HostName), so binding the IPv4 loopback is
// both sufficient and safe: the handler is never reachable from outside the instance.
// "localhost" is avoided because it may resolve to ::1 first. A caller that needs another
// interface (the embedded runtime, a container) passes its own address to Serve.
func Addr(port string) (string, error) {
	if port == "" {
		return "", fmt.Errorf("funchost: %s is empty: %w", PortEnv, ErrInvalidPort)
	}
	if len(port) > 5 {
		return "", fmt.Errorf("funchost: %s=%q: %w", PortEnv, port, ErrInvalidPort)
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return "", fmt.Errorf("funchost: %s=%q: not decimal digits: %w", PortEnv, port, ErrInvalidPort)
		}
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("funchost: %s=%q: want 1..65535: %w", PortEnv, port, ErrInvalidPort)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(n)), nil
}

// Default server limits, chosen for host.json's functionTimeout of 10 min.
const (
	// DefaultReadHeaderTimeout: the host sends headers at once over loopback.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds reading one whole request (at most MaxBodyBytes over
	// loopback). net/http clears the read deadline once the body is consumed, so it does
	// not limit how long a handler runs.
	DefaultReadTimeout = time.Minute
	// DefaultWriteTimeout bounds a handler plus its reply. The host's HTTP client waits
	// functionTimeout + 1 min (10 + 1 min) before giving up (docs/functions-protocol.md#wire-shape "Timeout"); a reply after
	// that is never read, so the server stops waiting at the same point.
	DefaultWriteTimeout = 11 * time.Minute
	// DefaultIdleTimeout keeps idle keep-alive connections longer than the host's .NET
	// HttpClient pool does (PooledConnectionIdleTimeout: 1 min on .NET 6+, 2 min before),
	// so the client, not the server, closes them and never sends on a closing socket.
	DefaultIdleTimeout = 3 * time.Minute
	// DefaultShutdownTimeout is the grace period for in-flight invocations on shutdown.
	DefaultShutdownTimeout = 30 * time.Second
)

// ServeOptions configures Serve; nil or zero fields mean the defaults above. A negative
// server timeout disables that limit; ShutdownTimeout is always bounded.
type ServeOptions struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	ShutdownTimeout   time.Duration
	// Ready, when set, is called with the bound address once the listener is open (the
	// readiness probe can succeed from then on).
	Ready func(addr net.Addr)
	// ErrorLog receives the server's connection-level errors; nil means the log package.
	ErrorLog *log.Logger
	// Listener, when set, is served instead of listening on addr: a caller that must know
	// the port is free before it does anything else (serve binds, then opens the store)
	// listens first with Listen and hands the listener over. Serve closes it.
	Listener net.Listener
}

// Listen opens the TCP listener Serve would open on addr (an address from Addr).
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("funchost: listen %s: %w", addr, err)
	}
	return ln, nil
}

func pick(v, def time.Duration) time.Duration {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// Serve listens on addr and serves h until ctx is cancelled, then shuts down gracefully:
// it stops accepting, lets in-flight requests finish for up to ShutdownTimeout, then
// closes what is left. Request contexts carry ctx's values but are not cancelled with it,
// so an invocation in progress is allowed to finish within the grace period. Serve returns
// nil after a clean shutdown, the listen or serve error otherwise, and an error wrapping
// context.DeadlineExceeded when the grace period ran out.
func Serve(ctx context.Context, addr string, h http.Handler, opts *ServeOptions) error {
	var o ServeOptions
	if opts != nil {
		o = *opts
	}
	ln := o.Listener
	if ln == nil {
		var err error
		if ln, err = Listen(addr); err != nil {
			return err
		}
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: pick(o.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       pick(o.ReadTimeout, DefaultReadTimeout),
		WriteTimeout:      pick(o.WriteTimeout, DefaultWriteTimeout),
		IdleTimeout:       pick(o.IdleTimeout, DefaultIdleTimeout),
		ErrorLog:          o.ErrorLog,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	grace := o.ShutdownTimeout
	if grace <= 0 {
		grace = DefaultShutdownTimeout
	}
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("funchost: serve %s: %w", addr, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	serr := srv.Shutdown(sctx)
	<-errc // Serve returns http.ErrServerClosed as soon as Shutdown starts.
	if serr != nil {
		_ = srv.Close()
		return fmt.Errorf("funchost: shutdown grace period %v exceeded, in-flight requests closed: %w", grace, serr)
	}
	return nil
}
