package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/delivery/acssim"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/publish"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

// Options tune Run.
type Options struct {
	// Dir holds the run's SQLite database and trace; "" uses a temporary directory that
	// is removed afterwards.
	Dir string
	Log *slog.Logger
	// FanOut runs DueWorkPoller in fan-out mode (AUTOMATION_DUEWORK_MODE=fanout): one
	// due-work message per claimed row, executed by DueWorkExecutor; the default is inline.
	FanOut bool
	// DrainBatches, above 1, has an inline DueWorkPoller run drain up to that many batches
	// of DrainBatchSize rows (AUTOMATION_DUEWORK_DRAIN_BATCHES, AUTOMATION_DUEWORK_BATCH_SIZE):
	// each next batch claimed and executed while the last one's outcomes are written
	// (scheduler.Poller.Drain). 0 or 1: one batch of the default size per run, whatever the
	// runtime's default (Run pins it: the output depends on it).
	DrainBatches, DrainBatchSize int
	// Driver, when set, is the deterministic simulator's hold on the run (driver.go); nil
	// for a plain replay.
	Driver Driver
	// Database, when set, is the content of a migrated SQLite database written as the run's
	// database before it opens (the simulator migrates once, not once per run).
	Database []byte
}

// ErrDirNotEmpty: Options.Dir already holds something; a replay always starts from an
// empty database, so it refuses rather than mixing runs.
var ErrDirNotEmpty = errors.New("replay: the -db directory must be new or empty")

// DeliveryLine is a "delivery" output line.
type DeliveryLine struct {
	Kind           string `json:"kind"` // "delivery"
	At             string `json:"at"`   // tick instant, RFC 3339 UTC
	SchedulerKey   string `json:"schedulerKey"`
	BusinessUnitID string `json:"businessUnitId"`
	// ScheduledOn (RFC 3339 UTC) and LocalTime (with the business unit's offset) are a
	// reminder's; a gateway user message (noti route) has neither.
	ScheduledOn string `json:"scheduledOn,omitempty"`
	LocalTime   string `json:"localTime,omitempty"`
	Channel     string `json:"channel"`
	Recipient   string `json:"recipient"`
	Template    string `json:"template"`
	Subject     string `json:"subject,omitempty"` // rendered, when the template exists
	Text        string `json:"text,omitempty"`
}

// RejectedLine is a "rejected" output line.
type RejectedLine struct {
	Kind    string `json:"kind"` // "rejected"
	At      string `json:"at"`
	Input   int    `json:"input"` // index in the scenario's inputs
	EventID string `json:"eventId,omitempty"`
	// Pointer is the JSON Pointer of the bad member of a rejected ingested event or
	// registry file.
	Pointer string `json:"pointer,omitempty"`
	// SettingGuid names the setting of a rejected settingUpsert/settingDeactivate input.
	SettingGuid string `json:"settingGuid,omitempty"`
	Error       string `json:"error"`
}

// SummaryLine is the closing "summary" line.
type SummaryLine struct {
	Kind       string                    `json:"kind"` // "summary"
	Rows       map[automation.Status]int `json:"rows"`
	Deliveries int                       `json:"deliveries"`
	Rejected   int                       `json:"rejected"`
	Routed     int                       `json:"routed,omitempty"`   // gateway messages published
	Unknown    int                       `json:"unknown,omitempty"`  // outcomes recorded UNKNOWN
	Failed     int                       `json:"failed,omitempty"`   // deliveries that failed for good
	Triggers   int                       `json:"triggers,omitempty"` // attribute engine trigger events
	// Actions counts campaign commands by their latest status (campaign scenarios only).
	Actions map[string]int `json:"actions,omitempty"`
}

// Run replays sc and writes one JSON object per line to out, in simulated-time order.
// It returns an error only when the pipeline itself fails (store, disk); bad inputs are
// "rejected" lines.
func Run(ctx context.Context, sc *Scenario, out io.Writer, opts *Options) (SummaryLine, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	dir := o.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "automation-replay-*")
		if err != nil {
			return SummaryLine{}, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else {
		if st, err := os.Stat(dir); err == nil && !st.IsDir() {
			return SummaryLine{}, fmt.Errorf("%w: %s is not a directory", ErrDirNotEmpty, dir)
		}
		if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
			return SummaryLine{}, fmt.Errorf("%w: %s", ErrDirNotEmpty, dir)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return SummaryLine{}, err
		}
	}
	if len(o.Database) > 0 {
		if err := os.WriteFile(filepath.Join(dir, "automation.db"), o.Database, 0o644); err != nil {
			return SummaryLine{}, err
		}
	}
	r := &runner{sc: sc, out: out, enc: json.NewEncoder(out), clock: automation.NewManualClock(sc.Start), fanOut: o.FanOut}
	channels, err := r.channels()
	if err != nil {
		return SummaryLine{}, err
	}
	// The embedded default's configuration (no environment: a scenario runs the same
	// everywhere), on the run's directory: dir/automation.db and dir/trace.
	cfg, err := config.Load(func(name string) string {
		switch {
		case name == "AUTOMATION_DATA_DIR":
			return dir
		case name == "AUTOMATION_DUEWORK_MODE" && o.FanOut:
			return string(config.ModeFanout)
		case name == "AUTOMATION_DUEWORK_DRAIN_BATCHES":
			// Always set: the replay's output (and its golden files) depends on the batches a
			// poll run takes, not on the runtime's default.
			return strconv.Itoa(max(o.DrainBatches, 1))
		case name == "AUTOMATION_DUEWORK_BATCH_SIZE" && o.DrainBatches > 1 && o.DrainBatchSize > 0:
			return strconv.Itoa(o.DrainBatchSize)
		}
		return ""
	})
	if err != nil {
		return SummaryLine{}, err
	}
	providers, stopProviders, err := r.startProviders()
	if err != nil {
		return SummaryLine{}, err
	}
	defer stopProviders()
	r.cfg, r.driver = cfg, o.Driver
	if po, ok := o.Driver.(ProviderObserver); ok {
		po.Providers(r.providerSims)
	}
	if wo, ok := o.Driver.(WebhookObserver); ok {
		wo.Webhooks(r.webhook.Receipts)
	}
	if so, ok := o.Driver.(SMSObserver); ok {
		so.SMS(r.acs.Requests)
	}
	r.appOpts = app.Options{Clock: r.clock, Channels: channels, Seed: 1, DispatchInOrder: true, Log: o.Log, OnOutcome: r.outcome,
		OnRouted: r.routed, OnAttributes: r.attributes, OnAttributeRefused: r.attributeRefused,
		CampaignProviders: providers, OnCampaignAction: r.action, CampaignSweepParallel: 1, WithoutBudgets: r.sc.billing == nil}
	stopBilling := r.startBilling()
	defer stopBilling()
	if err := r.open(ctx); err != nil {
		return SummaryLine{}, err
	}
	if err := r.setUpBilling(ctx); err != nil {
		return SummaryLine{}, err
	}
	defer func() {
		if r.e != nil {
			r.e.Close()
		}
	}()
	if err := r.setup(ctx); err != nil {
		return SummaryLine{}, err
	}
	if err := r.loop(ctx); err != nil {
		return SummaryLine{}, err
	}
	if r.driver != nil {
		if err := r.driver.Finish(ctx, r.e); err != nil {
			return SummaryLine{}, err
		}
	}
	counts, err := r.e.Store.SchedulerCountByStatus(ctx)
	if err != nil {
		return SummaryLine{}, err
	}
	if r.err != nil {
		return SummaryLine{}, r.err
	}
	sum := SummaryLine{Kind: "summary", Rows: counts, Deliveries: r.deliveries, Rejected: r.rejected, Routed: r.routedCount, Unknown: r.unknown, Failed: r.failed,
		Triggers: r.triggers, Actions: r.campaignSummary()}
	return sum, r.enc.Encode(sum)
}

type runner struct {
	reportState
	procState
	sc         *Scenario
	e          *app.Runtime
	out        io.Writer
	enc        *json.Encoder
	clock      *automation.ManualClock
	faults     *faults
	fanOut     bool // Options.FanOut
	deliveries int
	rejected   int
	unknown    int
	failed     int
	// routedCount counts the "routed" lines; relayDue: an ingest accepted an event with
	// routes, so the next tick on the grid runs the relay even when no row is due.
	routedCount int
	relayDue    bool
	triggers    int               // "trigger" lines
	eventInput  map[string]int    // accepted ingested event id -> its input index
	held        map[string]bool   // scheduler keys already reported "held"
	lastAction  map[string]string // campaign command id → latest recorded status
	err         error             // first output error of an outcome line

	// providerSims: the simulated action providers, by name (campaign.go).
	providerSims map[string]*providersim.Server
	// webhook: the webhook's receiver (delivery.go).
	webhook *webhookReceiver
	// acs: the sms channel's simulated ACS (delivery.go).
	acs *acssim.Server
}

func (r *runner) setup(ctx context.Context) error {
	for _, bu := range r.sc.BusinessUnits {
		if err := r.e.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: bu.ID, Name: bu.Name, TimeZoneID: bu.TimeZone}); err != nil {
			return err
		}
	}
	for i, set := range r.sc.settings {
		if err := set.Validate(Channels); err != nil {
			return fmt.Errorf("scenario: reminderSettings[%d]: %w", i, err)
		}
		rec, err := reminder.SettingRecord(set, 1, r.sc.Start)
		if err != nil {
			return err
		}
		if err := r.e.Store.ReminderSettingUpsert(ctx, rec); err != nil {
			return err
		}
	}
	return r.seedTemplates(ctx)
}

// loop advances the clock: inputs at their own instants, polls on the tick grid whenever a
// row can be due; an input and a poll at the same instant: the input first.
func (r *runner) loop(ctx context.Context) error {
	tick := r.sc.tick
	next := 0 // position in r.sc.order
	lastPoll := r.sc.Start.Add(-tick)
	now := r.sc.Start
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// A driver may move the clock forward (a lease expiring through a clock jump): time
		// never goes back.
		if c := r.clock.Now(); c.After(now) {
			now = c
		}
		var poll time.Time
		wake, err := r.e.Store.SchedulerNextWakeUp(ctx)
		if err != nil {
			return err
		}
		// Campaign retries, lookups and expired leases wake the simulator too.
		if cw, err := r.e.Store.CampaignNextWakeUp(ctx); err != nil {
			return err
		} else if cw != nil && (wake == nil || cw.Before(*wake)) {
			wake = cw
		}
		// Delivery retries, lookups and expired send claims wake the simulator too.
		if dw, err := r.e.Store.NotificationNextWakeUp(ctx); err != nil {
			return err
		} else if dw != nil && (wake == nil || dw.Before(*wake)) {
			wake = dw
		}
		if r.relayDue && (wake == nil || now.Before(*wake)) {
			w := now
			wake = &w
		}
		if wake != nil && !wake.After(r.sc.Until) {
			w := *wake
			if w.Before(now) {
				w = now
			}
			poll = r.ceilGrid(w)
			if min := lastPoll.Add(tick); poll.Before(min) {
				poll = min
			}
		}
		var inputAt time.Time
		if next < len(r.sc.order) {
			inputAt = r.sc.Inputs[r.sc.order[next]].At
		}
		switch {
		case !inputAt.IsZero() && !inputAt.After(r.sc.Until) && (poll.IsZero() || !inputAt.After(poll)):
			if inputAt.After(now) {
				now = inputAt
			}
			r.clock.Set(now)
			err := r.input(r.proc, r.sc.order[next])
			next++
			if err := r.after(ctx, now, err); err != nil {
				return err
			}
		case !poll.IsZero() && !poll.After(r.sc.Until):
			now, lastPoll = poll, poll
			r.clock.Set(now)
			r.relayDue = false
			res, err := r.e.Tick(r.proc)
			if err != nil {
				err = fmt.Errorf("tick %s: %w", now.Format(time.RFC3339), err)
			}
			if err := r.after(ctx, now, err); err != nil {
				return err
			}
			if err != nil {
				continue // the process restarted
			}
			// In fan-out mode DueWorkExecutor executes the rows, and the poll's result
			// cannot say how many went on hold: look whenever rows were claimed.
			if res.Held > 0 || res.Rescued > 0 || (r.fanOut && res.Claimed > 0) {
				if err := r.reportHeld(ctx, now.UTC().Format(time.RFC3339)); err != nil {
					return err
				}
			}
		default:
			// Inputs after until are not replayed.
			return nil
		}
	}
}

func (r *runner) ceilGrid(t time.Time) time.Time {
	tick := r.sc.tick
	d := t.Sub(r.sc.Start)
	k := (d + tick - 1) / tick
	return r.sc.Start.Add(k * tick)
}

func (r *runner) input(ctx context.Context, idx int) error {
	in := r.sc.Inputs[idx]
	if in.SettingUpsert != nil || in.SettingDeactivate != nil {
		return r.settingInput(ctx, idx)
	}
	if in.ReportInputs.count() > 0 {
		return r.reportInput(ctx, idx)
	}
	if len(in.Ingest) > 0 {
		return r.ingestInput(ctx, idx)
	}
	if len(in.Registry) > 0 {
		return r.registryInput(ctx, idx)
	}
	if len(in.Campaign) > 0 {
		return r.campaignInput(ctx, idx)
	}
	if in.Budget != nil {
		return r.budgetInput(ctx, idx)
	}
	if f := in.ChannelFault; f != nil {
		r.faults.set(*f)
		return r.enc.Encode(FaultLine{Kind: "fault", At: in.At.UTC().Format(time.RFC3339), Input: idx, Channel: f.Channel, Mode: f.Mode, Until: f.Until.Format(time.RFC3339)})
	}
	// The event arrives as a message of the domain-events topic and goes to
	// DomainEventHandler through the Functions router, as in serve: an invalid one is
	// dead-lettered there (a record in the trace) and becomes a "rejected" line.
	id := ""
	var msg bus.Message
	if ev, perr := events.Parse(in.Event); perr == nil {
		id, msg = ev.ID, publish.Message(ev, in.Event)
	} else {
		var peek struct {
			ID any `json:"id"`
		}
		if json.Unmarshal(in.Event, &peek) == nil {
			if s, ok := peek.ID.(string); ok {
				id = s
			}
		}
		msg = bus.Message{ID: id, Body: in.Event}
	}
	if msg.ID == "" {
		msg.ID = fmt.Sprintf("inputs-%d", idx) // a message always has an id; the event has none
	}
	err := r.e.DeliverEvent(ctx, msg)
	if err == nil {
		return nil
	}
	var dl *app.DeadLetteredError
	if !errors.As(err, &dl) {
		return fmt.Errorf("inputs[%d]: %w", idx, err)
	}
	r.rejected++
	return r.enc.Encode(RejectedLine{Kind: "rejected", At: in.At.UTC().Format(time.RFC3339), Input: idx, EventID: id, Error: dl.Reason})
}
