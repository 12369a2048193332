package delivery_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite"
)

// fileBroker is a durable broker for the crash test: each accepted message's id is
// appended to a file and synced before Publish returns (as Service Bus keeps what it
// accepted), so what a killed process published survives it.
type fileBroker struct{ f *os.File }

func (b fileBroker) Publish(_ context.Context, m bus.Message) error {
	if _, err := fmt.Fprintln(b.f, m.ID); err != nil {
		return err
	}
	return b.f.Sync()
}

// TestCrashChild is the process TestEagerPublishSurvivesSIGKILL kills; it runs only when
// that test starts it (DELIVERY_CRASH_CHILD names the kill point).
func TestCrashChild(t *testing.T) {
	point := os.Getenv("DELIVERY_CRASH_CHILD")
	if point == "" {
		t.Skip("run by TestEagerPublishSurvivesSIGKILL")
	}
	dir := os.Getenv("DELIVERY_CRASH_DIR")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "crash.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "broker.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	stop := func(at string) {
		fmt.Println("AT " + at) // the parent kills the process when it reads this
		time.Sleep(time.Hour)
	}
	relay := &delivery.Relay{Store: st, Publisher: fileBroker{f}, Clock: automation.SystemClock{}, Lease: time.Minute}
	if point == "publish-mark" {
		relay.Hooks = &delivery.RelayHooks{AfterPublish: func(context.Context, []int64) error { stop("published"); return nil }}
	}
	pump := delivery.NewPump(relay)
	st.OnOutboxCommit(func(int) {
		if point == "commit-publish" {
			stop("committed") // after the commit, before the eager publish
		}
		pump.Notify()
	})
	clock := automation.NewManualClock(time.Now())
	startWithOutbox(t, st, clock, "cx-crash", []store.OutboxMessage{{MessageID: "k1", Destination: "q", Body: []byte("{}")},
		{MessageID: "k2", Destination: "q", Body: []byte("{}")}, {MessageID: "k3", Destination: "q", Body: []byte("{}")}})
	pump.DrainOnce(ctx)
	t.Fatal("the kill point was never reached")
}

// TestEagerPublishSurvivesSIGKILL kills a real process (SIGKILL) between the commit of
// outbox rows and their eager publish, and between their publish and their mark; a new
// process's relay (the timer's safety net, after the lease) then publishes: nothing is
// lost, and a message published again carries the same MessageId, so a consumer that
// dedupes by it (as Service Bus duplicate detection and every consumer here do) applies
// each once.
func TestEagerPublishSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		point           string
		publishedBefore int // messages the broker holds from the killed process
	}{{"commit-publish", 0}, {"publish-mark", 3}} {
		t.Run(tc.point, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "DELIVERY_CRASH_CHILD="+tc.point, "DELIVERY_CRASH_DIR="+dir)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(out)
			reached := false
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "AT ") {
					reached = true
					break
				}
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if !reached {
				t.Fatal("the child never reached its kill point")
			}
			broker := func() []string {
				raw, _ := os.ReadFile(filepath.Join(dir, "broker.log"))
				return strings.Fields(string(raw))
			}
			if got := broker(); len(got) != tc.publishedBefore {
				t.Fatalf("the killed process published %v, want %d messages", got, tc.publishedBefore)
			}
			// The next process: the timer relay, once the killed process's lease ended.
			ctx := context.Background()
			st, err := sqlite.Open(ctx, filepath.Join(dir, "crash.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			f, err := os.OpenFile(filepath.Join(dir, "broker.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			later := automation.NewManualClock(time.Now().Add(2 * time.Minute))
			relay := &delivery.Relay{Store: st, Publisher: fileBroker{f}, Clock: later, Lease: time.Minute}
			if _, err := relay.Drain(ctx, time.Minute); err != nil {
				t.Fatal(err)
			}
			if n, _ := st.OutboxBacklog(ctx); n != 0 {
				t.Fatalf("%d rows still unpublished", n)
			}
			applied := map[string]int{} // a consumer that dedupes by MessageId
			for _, id := range broker() {
				applied[id]++
			}
			for _, id := range []string{"k1", "k2", "k3"} {
				if applied[id] == 0 {
					t.Fatalf("%s was lost; the broker holds %v", id, broker())
				}
				if applied[id] > 1+min(tc.publishedBefore, 1) {
					t.Fatalf("%s published %d times", id, applied[id])
				}
			}
			if len(applied) != 3 {
				t.Fatalf("the broker holds other messages: %v", applied)
			}
			// Published again, all three at most once more: the relay run after the crash
			// publishes each once (the next Drain finds nothing).
			if res, err := relay.Drain(ctx, time.Minute); err != nil || res.Published != 0 {
				t.Fatalf("a second drain published %d (%v), want none", res.Published, err)
			}
		})
	}
}
