package simhttptest

import "testing"

// TB is the part of a test Start uses: *testing.T, *testing.B and
// shared/delivery/channeltest.TB have it. Fatalf must stop the calling goroutine.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

var _ TB = (*testing.T)(nil)

// Sim is a simulator on a simhttp.Listener: Start serves it on addr ("host:port"), Close
// stops it.
type Sim interface {
	Start(addr string) error
	Close() error
}

// Start makes a simulator with newSim(cfg) (acssim.New, fcmsim.New), starts it on
// 127.0.0.1:0 and closes it when t ends. An error from newSim or Start fails t, naming the
// simulator's type.
func Start[C any, S Sim](t TB, newSim func(C) (S, error), cfg C) S {
	t.Helper()
	s, err := newSim(cfg)
	if err != nil {
		t.Fatalf("%T: %v", s, err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("%T start: %v", s, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
