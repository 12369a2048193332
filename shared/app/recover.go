package app

import "context"

// CatchUpProjection brings the delivery projection up to every NotificationJob's current
// revision (delivery.Projector.CatchUp), for at most MaxRedispatch jobs. The in-process bus
// forgets the fact messages it still held when the process stopped, after the relay had
// marked them published; like RedispatchUnsent for dispatch messages, this runs at start.
// No-op on Service Bus (durable). It returns how many facts it applied.
func (r *Runtime) CatchUpProjection(ctx context.Context) (int, error) {
	if r.Memory == nil {
		return 0, nil
	}
	return r.Projector.CatchUp(ctx, r.Store, MaxRedispatch)
}
