package app

import (
	"context"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/telemetry"
)

// levelsTTL is how long one read of the telemetry gauges serves the exports and scrapes
// that follow it (docs/operations.md#opentelemetry-metrics).
const levelsTTL = 15 * time.Second

// registerLevels wires the OTel gauges to the store queries the JSON metrics routes read,
// so that both tell one truth: GET /api/support/metrics for every business unit
// (support.Service.Metrics: the due backlog, the UNKNOWN deliveries, the held reservations,
// the fees by status, the outbox) and GET /api/campaigns/_metrics for every unit
// (campaign.ReadMetrics: the UNKNOWN and WAITING_BUDGET commands).
func (r *Runtime) registerLevels() error {
	if r.Telemetry == nil || !telemetry.MetricsEnabled() {
		return nil
	}
	_, err := r.Telemetry.RegisterLevels(r.readLevels, r.Clock.Now, levelsTTL)
	return err
}

func (r *Runtime) readLevels(ctx context.Context) (telemetry.Levels, error) {
	sm, err := r.Support.Metrics(ctx, automation.AllBusinessUnits(), "")
	if err != nil {
		return telemetry.Levels{}, err
	}
	cm, err := campaign.ReadMetrics(ctx, r.Store, r.Clock, nil, "")
	if err != nil {
		return telemetry.Levels{}, err
	}
	l := telemetry.Levels{DuePending: sm.PendingDueNow, DueOldestAgeSeconds: sm.OldestDueAgeSeconds,
		DueProcessing: sm.Processing, DueExpiredLeases: sm.ExpiredLeases, DeliveriesUnknown: sm.UnknownDeliveries,
		CommandsUnknown: cm.CommandsUnknown, CommandsWaiting: cm.CommandsWaiting,
		ReservationsHeld: sm.ReservationsHeld, ReservationsOldestHeldAgeSeconds: sm.OldestHeldAgeSeconds,
		FeesByStatus: sm.FeesByStatus, OutboxOldestAgeSeconds: sm.OutboxOldestAgeSeconds}
	if sm.OutboxUnsent != nil {
		l.OutboxUnsent = *sm.OutboxUnsent
	}
	return l, nil
}
