// Package simhttp is what the simulated providers (shared/delivery/acssim, fcmsim,
// shared/campaign/providersim, shared/budget/billingsim and the billing-sim command) share as
// HTTP servers: a listener on 127.0.0.1 with a bounded shutdown (Listener), the PUT /faults
// switch that takes a strict JSON body (FaultsHandler), a JSON answer (WriteJSON) and a
// connection closed unanswered (HangUp). It holds
// no provider logic: each simulator checks auth and applies faults as its real service does.
package simhttp
