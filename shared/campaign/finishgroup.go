package campaign

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/telemetry"
)

// DefaultFinishGather is the longest a command of a batch waits in step 7 for its
// batch-mates' outcomes before its own is written with whatever outcomes wait with it
// (Worker.FinishGather): a batch-mate whose provider call is slow, or that waits for a free
// place among the Parallel, holds the others' outcomes (and their leases) no longer than
// this. Real time, not an instant of the domain.
const DefaultFinishGather = 10 * time.Millisecond

// finishGroup gathers the outcomes (step 7) of one HandleBatch's commands into
// store.CampaignFinishMany transactions, one writer turn for many commands instead of one
// each (docs/performance.md, "The finishes of a batch together"). An outcome is written when
// every command of the batch that is still running (or still to start) waits in step 7 with
// it, or gather after the first of them began to wait. The transaction runs under the
// first outcome's context (its cancellation), each outcome's writes under its own command's
// trace (CampaignFinishParams.Trace: its outbox rows' TraceParent, the hook's context).
// Each command still gets its own outcome: its command as written, ErrLeaseLost when its
// lease was lost (nothing written for it), or its own error. When the batch's transaction
// fails, each outcome of it is written alone (CampaignFinish), so one the store refuses
// holds back no other.
type finishGroup struct {
	st     store.CampaignStore
	gather time.Duration

	mu      sync.Mutex
	running int // commands of the batch in (or still to start) steps 3–7, not waiting in finish
	pending []finishReq
	timer   *time.Timer
}

type finishReq struct {
	ctx  context.Context
	p    store.CampaignFinishParams
	done chan store.CampaignFinishResult
}

type finishGroupKey struct{}

// withFinishGroup returns ctx carrying g: Worker.finish then goes through g.
func withFinishGroup(ctx context.Context, g *finishGroup) context.Context {
	return context.WithValue(ctx, finishGroupKey{}, g)
}

func finishGroupOf(ctx context.Context) *finishGroup {
	g, _ := ctx.Value(finishGroupKey{}).(*finishGroup)
	return g
}

// newFinishGroup returns the group of n commands, all counted as running from the start (a
// command still waiting for its place among the Parallel is one the others wait for, up to
// gather).
func newFinishGroup(st store.CampaignStore, n int, gather time.Duration) *finishGroup {
	return &finishGroup{st: st, gather: gather, running: n}
}

// end counts out a command whose steps 3–7 returned.
func (g *finishGroup) end() {
	g.mu.Lock()
	g.running--
	batch := g.takeIfAllWait()
	g.mu.Unlock()
	g.write(batch)
}

// finish writes p with its batch-mates' outcomes and returns its own.
func (g *finishGroup) finish(ctx context.Context, p store.CampaignFinishParams) (store.CampaignCommand, error) {
	r := finishReq{ctx: ctx, p: p, done: make(chan store.CampaignFinishResult, 1)}
	g.mu.Lock()
	g.running--
	g.pending = append(g.pending, r)
	if len(g.pending) == 1 {
		g.timer = time.AfterFunc(g.gather, g.flush)
	}
	batch := g.takeIfAllWait()
	g.mu.Unlock()
	g.write(batch)
	res := <-r.done
	g.mu.Lock()
	g.running++
	g.mu.Unlock()
	return res.Command, res.Err
}

// flush writes what waits (gather passed).
func (g *finishGroup) flush() {
	g.mu.Lock()
	batch := g.take()
	g.mu.Unlock()
	g.write(batch)
}

// takeIfAllWait takes the waiting outcomes when no command of the batch is still running
// (g.mu held).
func (g *finishGroup) takeIfAllWait() []finishReq {
	if g.running > 0 {
		return nil
	}
	return g.take()
}

// take takes the waiting outcomes, at most store.MaxBatch (g.mu held).
func (g *finishGroup) take() []finishReq {
	if len(g.pending) == 0 {
		return nil
	}
	n := min(len(g.pending), store.MaxBatch)
	batch := g.pending[:n:n]
	g.pending = append([]finishReq(nil), g.pending[n:]...)
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	if len(g.pending) > 0 {
		g.timer = time.AfterFunc(0, g.flush)
	}
	return batch
}

// write writes batch: one outcome alone, several in one CampaignFinishMany, each alone
// should that fail.
func (g *finishGroup) write(batch []finishReq) {
	switch len(batch) {
	case 0:
		return
	case 1:
		c, err := g.st.CampaignFinish(batch[0].ctx, batch[0].p)
		batch[0].done <- store.CampaignFinishResult{Command: c, Err: err}
		return
	}
	ps := make([]store.CampaignFinishParams, len(batch))
	traced := telemetry.Enabled()
	for i, r := range batch {
		ps[i] = r.p
		if traced {
			// The batch runs under the first outcome's ctx; each outcome's outbox rows and
			// post-result hook keep its own command's trace (store.CampaignFinishParams.Trace).
			ps[i].Trace = trace.SpanContextFromContext(r.ctx)
		}
	}
	res, err := g.st.CampaignFinishMany(batch[0].ctx, ps)
	if err != nil {
		for _, r := range batch {
			c, err := g.st.CampaignFinish(r.ctx, r.p)
			r.done <- store.CampaignFinishResult{Command: c, Err: err}
		}
		return
	}
	for i, r := range batch {
		r.done <- res[i]
	}
}
