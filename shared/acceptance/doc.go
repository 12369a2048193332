// Package acceptance drives the product end to end as its clients do: a Harness opens the
// embedded runtime (app.Open on SQLite with the in-process bus and a manual clock), serves
// its /api routes on a real HTTP server bound to 127.0.0.1, seeds business units, reminder
// settings and templates from a scenario file and the event registry through the registry
// API, and then takes inputs only over HTTP (POST /api/events). Advance moves the clock like
// the Functions host's timers would (every instant at which scheduled work or a delivery is
// due, then the target), and the Harness records what left the product: every gateway
// message the relay published (events, tracking, noti, the source route's domain-events),
// every message on events and tracking as its consumer acknowledged it (the product's own
// consumers run: the harness wraps them, never replaces them), every delivery and campaign
// action outcome; attributes and rankings are read over the attribute API. The loyalty use
// cases of docs/loyalty.md are its tests.
//
// With Options.Push the push channel sends to a simulated FCM (shared/delivery/fcmsim) the
// test owns, and the seeds' push steps move to it: Options.PushActions turns campaign
// actions (UC-01's OTT message) into NOTIFICATION_PUSH actions, Options.PushEvents adds
// "push" to a registry event's notification channels (UC-10's Voucher_Used), and
// Options.PushReminders turns a reminder setting's inbox channel into push (UC-13's dormant
// offer). The shared registry and scenario files stay without push: they are also a plain
// serve's files (no FCM there) and the replay's golden scenario. The test registers the
// member's devices over PUT /api/devices and reads what reached them from the simulator.
//
// A Harness's state machine:
//
//	Start ──► seeded (business units, settings, templates, registry) ──► serving
//	serving ──► Ingest / Get / Stream (HTTP, clock unchanged) ──► serving
//	serving ──► Advance(t) (ticks at each due instant ≤ t, then at t) ──► serving
//	serving ──► Close (server shut down, runtime closed)
//
// Everything a test asserts comes from the HTTP answers, the observers app.Open offers
// (OnRouted, OnOutcome, OnCampaignAction, OnAttributeRefused) and the wrapped consumers;
// the store is read only through the product's APIs.
package acceptance
