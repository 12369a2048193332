package report_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/report"
	"github.com/automation-platform/automation/shared/store"
)

// TestTwoPollersAndOldSchedulerNeverDeliverTwice races two pollers (each its own Poller on
// the same database) and a simulated old scheduler on the same run keys, while the clock
// jumps past leases so rows are rescued and re-claimed mid-flight. For every key, exactly one
// side delivers: either our NotificationJobs (one per recipient, each sent once) or the old
// scheduler's delivery, never both; our rows that lost the key are on support hold.
func TestTwoPollersAndOldSchedulerNeverDeliverTwice(t *testing.T) {
	t.Parallel()
	const subs = 12
	e := newEnv(t, utc("2027-03-21T20:00:00Z"))
	e.render.delay = time.Millisecond
	var keys []string
	for i := 0; i < subs; i++ {
		g := fmt.Sprintf("%08x-1111-4222-8333-444455556666", i+1)
		v := e.create(t, g, weekly())
		e.setMode(t, g, report.ModeScheduledAllowlist)
		keys = append(keys, v.NextRun.SchedulerKey)
	}
	e.clock.Set(utc("2027-03-21T21:00:00Z"))
	p1, p2 := e.newPoller(t), e.newPoller(t)

	var (
		mu       sync.Mutex
		oldSent  = map[string]int{}
		wg       sync.WaitGroup
		stop     = make(chan struct{})
		errs     = make(chan error, 8)
		rnd      = rand.New(rand.NewPCG(7, 11))
		shuffled = append([]string(nil), keys...)
		ctx      = context.Background()
	)
	rnd.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, p := range []*struct{ run func(context.Context) error }{
		{func(c context.Context) error { _, err := p1.RunOnce(c); return err }},
		{func(c context.Context) error { _, err := p2.RunOnce(c); return err }},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := p.run(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	// The old scheduler: acquire, "send" through its own system, record DeliveryCreated.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, k := range shuffled {
			time.Sleep(time.Duration(rnd.IntN(4)) * time.Millisecond)
			a, err := e.svc.OldSchedulerAcquire(ctx, automation.AllBusinessUnits(), k, "ops")
			if err != nil {
				errs <- err
				return
			}
			if !a.Acquired {
				continue
			}
			mu.Lock()
			oldSent[k]++
			mu.Unlock()
			if _, err := e.svc.OldSchedulerDeliveryCreated(ctx, automation.AllBusinessUnits(), report.OldSchedulerFence{SchedulerKey: k,
				OwnerVersion: a.Ownership.OwnerVersion, Coordinates: []byte(`{"oldJob":"` + k + `"}`)}); err != nil {
				errs <- err
				return
			}
		}
	}()
	// The clock: jumps past leases (rescue mid-flight) and past backoffs (re-claim).
	for i := 0; i < 40; i++ {
		time.Sleep(3 * time.Millisecond)
		e.clock.Advance(time.Duration(1+i%7) * time.Minute)
	}
	e.clock.Advance(48 * time.Hour)
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Settle: finish whatever is left, then relay and dispatch everything.
	for i := 0; i < 10; i++ {
		e.clock.Advance(2 * time.Hour)
		e.tick(t)
	}
	perKey := map[string]int{}
	perDelivery := map[string]int{}
	for _, m := range e.sentMessages() {
		perKey[m.SchedulerKey]++
		perDelivery[m.DeliveryKey]++
	}
	ours, theirs, held := 0, 0, 0
	for _, k := range keys {
		own, err := e.st.ReportOwnershipGet(ctx, k)
		if err != nil {
			t.Fatalf("%s: no ownership: %v", k, err)
		}
		row, _ := e.st.SchedulerGetByKey(ctx, k)
		switch {
		case perKey[k] > 0 && oldSent[k] > 0:
			t.Fatalf("%s delivered by both schedulers", k)
		case perKey[k] == 0 && oldSent[k] == 0 && row.Status == automation.StatusFailed && row.IsOnSupportHold:
			// On a loaded machine every attempt can outlive its lease while the clock jumps:
			// after the backoff ladder the run waits on support hold. Nothing is lost and
			// nothing was sent twice, which is what this test is about.
			held++
		case perKey[k] == 0 && oldSent[k] == 0:
			t.Fatalf("%s delivered by nobody: row %s, ownership %+v", k, row.Status, own)
		case oldSent[k] > 1:
			t.Fatalf("%s: the old scheduler acquired it %d times", k, oldSent[k])
		case perKey[k] > 0:
			ours++
			if perKey[k] != 2 || own.OwnerType != store.OwnerAutomationScheduler || own.Status != store.OwnershipDeliveryCreated || row.Status != automation.StatusCompleted {
				t.Fatalf("%s: sent %d, ownership %+v, row %s", k, perKey[k], own, row.Status)
			}
		default:
			theirs++
			if own.OwnerType != store.OwnerOldScheduler || !row.IsOnSupportHold || row.Status == automation.StatusCompleted {
				t.Fatalf("%s: old scheduler delivered, ownership %+v, our row %s hold=%v", k, own, row.Status, row.IsOnSupportHold)
			}
		}
	}
	for dk, n := range perDelivery {
		if n != 1 {
			t.Fatalf("delivery %s sent %d times", dk, n)
		}
	}
	if ours+theirs == 0 {
		t.Fatalf("no run was delivered at all (%d held): the race was not exercised", held)
	}
	t.Logf("ours %d, old scheduler %d, held %d, renders %d", ours, theirs, held, e.render.n.Load())
}
