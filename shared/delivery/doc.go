// Package delivery is stage ③ (docs/architecture.md#delivery): delivery requests written with a
// completed scheduler row, the outbox relay that publishes them after commit, and the
// dispatcher that renders each one and sends it through a channel exactly once per delivery
// key behind a send claim, recording an UNKNOWN outcome instead of guessing when a provider
// may or may not have acted.
//
// # Commands and their states
//
// A NotificationJob is a command (docs/seeds.md#seed-002, docs/architecture.md#commands): CommandID = DeliveryKey, an EffectKey
// unique per business unit, a Revision that grows on every status change, each change
// writing a fact (store.DeliveryFact) to the outbox in the same transaction (docs/architecture.md#facts).
//
//	           claim (lease, Version+1)              send ok
//	Queued ───────────────────────────► Sending ─────────────► Sent
//	  ▲  ▲                               │  │ │ permanent error / bad address / render error
//	  │  └─ retry at NextAttemptOn ◄─────┘  │ └────────────────► Failed
//	  │     (transient error; UNKNOWN on an │   retries exhausted ► Failed + IsOnSupportHold
//	  │      idempotent channel)            │
//	  │                                     │ UNKNOWN (timeout after the request left)
//	  │                                     ▼
//	  │                                  Unknown ── NextAttemptOn set: the channel's lookup
//	  │                                     │       runs then (claim in doubt → Lookup)
//	  │                                     └─ NextAttemptOn null: manual-resolution queue,
//	  │                                        resolved Sent or Failed by an operator
//	  └─ (a claim whose lease expired is taken over "in doubt": resend only on an
//	      idempotent channel, else look up, else Unknown — never a blind second send)
//
// Before rendering, a clean claim asks the Gate (recipient preferences and quiet hours,
// shared/preference): an opt-out ends the job Skipped (final, the reason in LastError); a
// marketing delivery inside quiet hours goes back to Queued until the window ends
// (NextAttemptOn, RetryCount unchanged: a wait is not a failed attempt). An in-doubt claim
// asks it once the lookup said not delivered, or, on an idempotent channel (no lookup),
// before the resend: there only an opt-out recorded at or before the job's first claim
// (FirstClaimedOn, kept by the send claims) ends it Skipped (the earlier claim may have died
// before its gate, as when another send of its batch crashed, and every gate read follows
// its claim; a later opt-out may postdate a send that arrived). Dispatcher.gateInDoubt
// gives the boundary.
//
// Crash safety: a sender that dies between claim and send, or between send and recording
// the outcome, leaves a Sending job whose lease expires. The next claim is InDoubt, so a
// channel that cannot deduplicate by the delivery key is never called twice: the job goes
// to Unknown for lookup or a person. Exactly one delivery, or one UNKNOWN awaiting
// resolution, never two. A channel call gets a context that ends with the lease, and a claim
// whose lease ran out before the call is never used to call the channel. A Queued job whose
// dispatch message was lost for good is started by the sweep after Dispatcher.QueuedGrace.
// An expired claim counts as a failed attempt (docs/architecture.md#failure-backoff-and-rescue): once the attempts of the backoff ladder
// are used up, an in-doubt claim goes to the manual-resolution queue instead of calling the
// channel again, so a delivery that kills its sender every time does not loop.
//
// # Batches
//
// Dispatcher.HandleBatch runs the dispatch messages a consumer holds at once: one
// transaction claims them all (store NotificationClaimMany), the claimed jobs are sent with
// bounded concurrency per channel and no transaction open, and the outcomes are recorded in
// group commits as the sends finish (NotificationFinishMany), each write fenced by its
// claim's Version as one by one, so a finished send never waits for a slower one. The group
// commit is the dispatcher's, shared by every batch it runs at once (recorder): a group
// takes what waited from all of them, at most store.MaxBatch outcomes. A crash
// between a send and its record leaves the claims not yet recorded Sending, in doubt once
// their leases expire, exactly as a crash after a single send does
// (docs/performance.md#dispatch-per-batch).
//
// Both runtimes take this path: the in-process bus hands the waiting dispatch messages over
// at once (up to 100) and the Service Bus trigger is declared with cardinality "many".
//
// # Outbox relay
//
// Relay.RunOnce claims a batch of outbox rows under one lease over their Id range (store
// OutboxClaim), publishes each row's messages (an envelope row, a batch's delivery facts,
// carries several; store.OutboxMessage.Items), marks the rows and gives the lease back:
//
//	unpublished ── claim (lease over the batch's Id range) ──► leased ── published ──► marked
//	     ▲   ▲                                                   │ │
//	     │   └── lease ended (relay died) or given back ◄────────┘ │
//	     └── RetryAt came ◄── publish failed (the whole row) ◄──────┘
//
// With MarkOnSettle (the in-process bus, which is not durable) a row is marked only once
// every one of its messages was settled, and the lease is given back when the last row the
// run published is marked.
//
// Relay.Drain runs RunOnce until the outbox is empty (or the bus is full, or Relay.Room
// says the consumers hold enough) or a time budget is spent. Two callers share the work
// under the same leases: the eager publisher (Pump), woken by the store's commit hook right
// after every commit that wrote outbox rows, in the process that committed; and the
// OutboxRelay timer, the safety net for rows whose eager publish failed or whose process
// died (docs/performance.md#publish-on-the-commit-path). Backlog is ingest's backpressure
// gate over the same outbox (docs/gateway.md#backpressure).
//
// # Channels
//
// A Channel declares its Traits (Idempotent: a resend with the same Idempotency-Key is
// safe; NeedsContent: a rendered template is required), validates recipient addresses, and
// reports send errors as Permanent, Unknown, or anything else (not delivered, retry). A
// channel may also implement Looker to find out what happened to an UNKNOWN send. Real
// channels (webhook, SMTP, FCM, ACS SMS and WhatsApp) live in shared/delivery/channel; the
// log channel is here. Limit puts a channel behind its provider's concurrency, rate and
// timeout (AUTOMATION_CHANNEL_LIMITS, docs/configuration.md#channel-limits); a refusal
// (ErrProviderBusy) sent nothing and is retryable. Traits.TemplateKinds says which template
// kinds a channel sends.
//
// # Templates
//
// Templates are versioned per key and overridable per business unit (store
// NotificationTemplate), parsed at save time (a template that does not parse is rejected),
// and rendered with text/template (subject, text) and html/template (HTML) and
// missingkey=error: a missing field is a RenderError naming it, never a blank. A template
// has a kind (message, push, sms, whatsapp; docs/channels.md#template-kinds) that decides its
// parts. Delete stores a tombstone version: the unit renders the default again. TestSender
// queues a test send: a real delivery whose SchedulerKey starts with TestSendKeyPrefix.
package delivery
