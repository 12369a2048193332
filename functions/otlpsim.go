package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/telemetry/otlptest"
)

// otlpSimAddr is the OTLP/HTTP default address (OTEL_EXPORTER_OTLP_ENDPOINT's usual port).
const otlpSimAddr = "127.0.0.1:4318"

// otlpSimNames bounds the span-id → name map otlp-sim keeps to name parents: when full it is
// emptied (a parent seen long before prints its id only).
const otlpSimNames = 10000

// otlpsimCmd runs a local OTLP/HTTP trace receiver until ctx ends:
// `automation otlp-sim [-addr 127.0.0.1:4318]` (docs/observability.md#locally). It prints
// its base URL on stdout, then each received span as one line in the observability guide's
// listing format (otlptest.Line: name, kind, span, parent, key attributes). Exporters send
// a span when it ends, so a child usually prints before its parent, and a parent's name is
// printed only when that parent arrived before. Metrics exports are accepted and dropped.
// Exit codes: 0 stopped, 1 could not listen, 2 bad flags.
func otlpsimCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("otlp-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", otlpSimAddr, "host:port to listen on (OTEL_EXPORTER_OTLP_ENDPOINT=http://<addr>)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "otlp-sim: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "otlp-sim: %v\n", err)
		return 1
	}
	var mu sync.Mutex
	names := map[string]string{}
	h := otlptest.Handler(func(spans []otlptest.Span) {
		mu.Lock()
		defer mu.Unlock()
		if len(names)+len(spans) > otlpSimNames {
			clear(names)
		}
		for _, s := range spans {
			names[s.SpanID] = s.Name
		}
		for _, s := range spans {
			fmt.Fprintln(stdout, otlptest.Line(s, names[s.ParentID]))
		}
	}, nil)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "otlp-sim: listening on http://%s (OTEL_EXPORTER_OTLP_ENDPOINT)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return 0
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return 0
		}
		fmt.Fprintf(stderr, "otlp-sim: %v\n", err)
		return 1
	}
}
