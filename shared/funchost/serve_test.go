package funchost_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/funchost"
)

func TestAddr(t *testing.T) {
	t.Parallel()
	ok := map[string]string{"7071": "127.0.0.1:7071", "1": "127.0.0.1:1", "65535": "127.0.0.1:65535", "08080": "127.0.0.1:8080"}
	for in, want := range ok {
		got, err := funchost.Addr(in)
		if err != nil || got != want {
			t.Errorf("Addr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "00000", "65536", "99999", "123456", "-1", "+80", " 80", "80 ", "8o80", "0x50", "80.0", "١٢٣"} {
		if got, err := funchost.Addr(in); !errors.Is(err, funchost.ErrInvalidPort) {
			t.Errorf("Addr(%q) = %q, %v; want ErrInvalidPort", in, got, err)
		}
	}
}

// startServe runs Serve on an ephemeral loopback port and returns its base URL and result.
func startServe(t *testing.T, ctx context.Context, h http.Handler, opts *funchost.ServeOptions) (string, <-chan error) {
	t.Helper()
	ready := make(chan net.Addr, 1)
	o := funchost.ServeOptions{}
	if opts != nil {
		o = *opts
	}
	o.Ready = func(a net.Addr) { ready <- a }
	o.ErrorLog = log.New(io.Discard, "", 0)
	done := make(chan error, 1)
	go func() { done <- funchost.Serve(ctx, "127.0.0.1:0", h, &o) }()
	select {
	case a := <-ready:
		return "http://" + a.String(), done
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not start")
	}
	return "", nil
}

func TestServeGracefulShutdown(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	r := funchost.NewRouter(&funchost.RouterOptions{Logger: quiet})
	r.Register("DueWorkExecutor", func(ctx context.Context, _ *funchost.Invocation) (funchost.Result, error) {
		close(entered)
		<-release
		if ctx.Err() != nil {
			return funchost.Result{}, errors.New("in-flight invocation was cancelled by shutdown")
		}
		return funchost.Result{Logs: []string{"finished"}}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	base, done := startServe(t, ctx, r, nil)

	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("readiness %d", resp.StatusCode)
	}

	result := make(chan int, 1)
	go func() {
		resp, err := http.Post(base+"/DueWorkExecutor", "application/json", stringsReader(`{"Data":{},"Metadata":{}}`))
		if err != nil {
			result <- -1
			return
		}
		resp.Body.Close()
		result <- resp.StatusCode
	}()
	<-entered
	cancel() // shutdown starts with one invocation in flight
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Serve returned before the in-flight invocation finished: %v", err)
	default:
	}
	close(release)
	if code := <-result; code != 200 {
		t.Fatalf("in-flight invocation got %d", code)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve = %v, want nil after a clean shutdown", err)
	}
}

func TestServeShutdownGraceExceeded(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	})
	ctx, cancel := context.WithCancel(context.Background())
	base, done := startServe(t, ctx, h, &funchost.ServeOptions{ShutdownTimeout: 50 * time.Millisecond})
	go func() {
		if resp, err := http.Get(base + "/slow"); err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Serve = %v, want DeadlineExceeded", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not give up after its grace period")
	}
}

func TestServeListenError(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = funchost.Serve(context.Background(), ln.Addr().String(), http.NotFoundHandler(), nil)
	if err == nil {
		t.Fatal("want an error for a port in use")
	}
}

func TestServeReadHeaderTimeout(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, _ := startServe(t, ctx, funchost.NewRouter(nil), &funchost.ServeOptions{ReadHeaderTimeout: 100 * time.Millisecond})
	conn, err := net.Dial("tcp", base[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n")) // headers never finish
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	_, _ = io.ReadAll(conn) // returns when the server closes the connection
	if time.Since(start) > 3*time.Second {
		t.Fatal("server kept a slow-header connection open")
	}
}
