package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// checkpointer runs the store's WAL checkpoints on a connection of its own, in the
// background, so that the writer connection's commits do not wait for them
// (docs/performance.md, "One writer connection, checkpoints in the background").
//
// States: idle (waiting for a kick) → checkpointing (one PRAGMA wal_checkpoint(PASSIVE)
// at a time) → resting (interval, Options.CheckpointInterval) → idle; stopped after close.
// Kicks that arrive while it checkpoints or rests are coalesced into one more checkpoint,
// so it never queues more than one.
//
// A PASSIVE checkpoint copies the WAL frames no reader still needs into the database
// file and syncs both; it never waits for the writer and never blocks it. The rest between
// two checkpoints lets several commits' frames accumulate, so a page that every batch
// rewrites (a random-key index's leaf, a hot table page) is copied into the file once per
// checkpoint instead of once per commit: at 1000-row batches that is about a fifth of the
// bytes written. The writer's own automatic checkpoint (wal_autocheckpoint,
// Options.AutoCheckpointPages) stays on as the bound: when the log reaches that size anyway,
// the writer checkpoints what is left, and the next write transaction starts the log from
// its beginning again. A failed background checkpoint is not retried: the next kick, or
// that bound, takes its place.
type checkpointer struct {
	conn     *sql.Conn
	interval time.Duration // rest after each checkpoint; 0: none
	kick     chan struct{}
	stop     context.CancelFunc
	done     chan struct{}
	once     sync.Once
	runs     chan struct{} // tests: one value per finished checkpoint, dropped when full
}

// startCheckpointer starts the background loop on conn, which it owns and closes; after
// each checkpoint it rests for interval (0: not at all) before it takes the next kick.
func startCheckpointer(conn *sql.Conn, interval time.Duration) *checkpointer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{conn: conn, interval: interval, kick: make(chan struct{}, 1), stop: cancel, done: make(chan struct{}), runs: make(chan struct{}, 16)}
	go c.loop(ctx)
	return c
}

// Kick asks for a checkpoint soon; it never blocks (the store calls it after each commit
// on the writer connection).
func (c *checkpointer) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop(ctx context.Context) {
	defer close(c.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		var busy, logFrames, copied int64
		_ = c.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logFrames, &copied)
		select {
		case c.runs <- struct{}{}:
		default:
		}
		if c.interval > 0 {
			rest := time.NewTimer(c.interval)
			select {
			case <-ctx.Done():
				rest.Stop()
				return
			case <-rest.C:
			}
		}
	}
}

// Close stops the loop, waiting for a checkpoint in progress to end (a PASSIVE
// checkpoint is bounded by the size of the log), and closes its connection.
func (c *checkpointer) Close() error {
	var err error
	c.once.Do(func() {
		c.stop()
		<-c.done
		err = c.conn.Close()
	})
	return err
}
